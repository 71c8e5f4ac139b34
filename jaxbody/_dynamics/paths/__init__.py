"""Muscle and tendon paths (OpenSim's GeometryPath, MJCF spatial tendons): length, lengthening speed, moment
arms and the forces a tension along the path applies. ``base`` holds the interface every path implements."""
