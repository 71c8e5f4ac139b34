"""OpenSim's muscle models: curves (one module per family), pennation, activation dynamics, one module per muscle
model, and the force element that applies a muscle's tension along its path."""
