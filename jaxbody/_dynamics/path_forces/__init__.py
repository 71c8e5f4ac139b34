"""Passive and actuated forces along a path that are not muscles (OpenSim's Ligament, ...)."""
