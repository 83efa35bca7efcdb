"""The bottom layer: small helpers every package may use (it imports none of them)."""
