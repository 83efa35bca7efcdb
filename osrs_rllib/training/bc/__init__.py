"""Behaviour cloning (``osrs-rllib bc``): `data` turns recorded fights into demonstrations checked against the config's
rules, and `learn` trains the config's policy network on them, writing a model file a run can warm-start from."""
