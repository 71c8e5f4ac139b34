"""Conditional (unilateral) constraints of Simbody's SemiExplicitEulerTimeStepper (Simbody catalogue 2.20).

``contact_set``: the batched UnilateralContactSet (one group per geometry, contacts of a group evaluated
at once) and its kinematics: separations, the velocity Jacobian rows (normal, two friction directions).
"""
