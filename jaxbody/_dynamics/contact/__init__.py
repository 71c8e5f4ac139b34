"""Smooth compliant contact force elements (catalogue 5, "Other force-producing components").

``geometry``: station kinematics, sphere/half-space pair geometry, point forces on bodies (vectorized over
contact pairs). One module per element: ``hunt_crossley`` (Simbody's HuntCrossleyForce),
``smooth_sphere_half_space`` (Simbody/OpenSim's SmoothSphereHalfSpaceForce), ``exponential_spring``
(Simbody's ExponentialSpringForce, with its elastic anchor point as continuous state z).

Simbody's compliant contact on real geometry: ``shapes`` (one record per ContactGeometry kind), ``trackers/``
(the Contact record, the pair table, the primitive trackers), ``compliant_models`` (HertzCircular,
HertzElliptical, brick/half-space penalty), ``compliant`` (the CompliantContactSubsystem element and its
ContactForces report).
"""
