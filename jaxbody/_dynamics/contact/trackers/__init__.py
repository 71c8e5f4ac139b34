"""Contact trackers (Simbody's ContactTracker): one function per pair of shape kinds, batched over pairs.

``contact``: the ``Contact`` record every tracker returns; ``table``: which tracker and which force model
serve each (kind1, kind2); ``primitive``: half-space, sphere, ellipsoid, capsule and brick pairs.
"""
