"""Contact trackers: per pair kind, the geometry a contact force needs (fixed-size arrays, batched over pairs)."""
