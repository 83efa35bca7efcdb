"""Pipeline tools that write the project's artifacts, run from the repository root as ``python -m tools.NAME``.

* `model_card`: a model file's card (identity, win rates per build, exploitability), the cards of
  docs/models.md that tests/test_shipped_models.py holds to the shipped files.
* `league_study`: trains the league study's recipes, exploits them and measures them (results/study/).

Why apart from `benchmarks/`: a benchmark only measures and prints; these train, write files the repository
keeps, and are steps of how a shipped model is made.
"""
