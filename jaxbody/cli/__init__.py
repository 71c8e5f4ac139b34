"""The ``jaxbody`` command line (``jaxbody demo``, ``jaxbody --version``)."""

from jaxbody.cli.main import main as main
