"""Simbody's force elements (catalogue 5), one module per family; the interface is jaxbody._dynamics.forces."""
