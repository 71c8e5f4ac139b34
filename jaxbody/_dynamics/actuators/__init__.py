"""Actuators: force elements driven by ``State.controls`` (OpenSim's and MuJoCo's), one module per family."""
