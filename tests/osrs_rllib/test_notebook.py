"""notebooks/analyze_checkpoints.ipynb, executed end to end with nbclient against a tiny trained experiment."""

from __future__ import annotations

import base64
import os
import shutil
from pathlib import Path

import pytest

from tests.osrs_rllib.test_analysis import trained_smoke_experiment

REPO = Path(__file__).resolve().parents[2]
NOTEBOOK = REPO / "notebooks" / "analyze_checkpoints.ipynb"


def test_analysis_notebook_runs_against_a_trained_experiment(
    tmp_path_factory: pytest.TempPathFactory, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue bar: no cell errors, every plot cell leaves an image, the first plot is saved as a PNG."""
    nbformat = pytest.importorskip("nbformat", reason="install the analysis extra: pip install -e '.[analysis]'")
    nbclient = pytest.importorskip("nbclient", reason="install the analysis extra: pip install -e '.[analysis]'")
    # A copy: the notebook caches its table in the experiment, which the analysis tests (perhaps in another
    # pytest-xdist worker at the same moment) read and write.
    smoke = Path(shutil.copytree(trained_smoke_experiment(tmp_path_factory), tmp_path / "smoke"))
    monkeypatch.setenv("OSRS_ANALYSIS_EXPERIMENT", str(smoke))
    monkeypatch.setenv("OSRS_ANALYSIS_FIGHTS", "6")
    monkeypatch.setenv("MPLBACKEND", "agg")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])))

    nb = nbformat.read(NOTEBOOK, as_version=4)
    first = next(c for c in nb.cells if c.cell_type == "code")
    assert "experiments/nh" in first.source and "parameters" in first.metadata.get("tags", [])
    client = nbclient.NotebookClient(nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": REPO}})
    client.execute()  # raises CellExecutionError, with the cell and its traceback, on any error
    nbformat.write(nb, tmp_path / "analyze_checkpoints.executed.ipynb")

    errors = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs if o.output_type == "error"]
    assert not errors
    plot_cells = [c for c in nb.cells if "plot" in c.metadata.get("tags", [])]
    assert len(plot_cells) >= 5  # learning curves, per opponent, action distributions, prayers/styles, one fight
    images = []
    for cell in plot_cells:
        pngs = [o.data["image/png"] for o in cell.outputs if "image/png" in o.get("data", {})]
        assert pngs, f"plot cell left no image:\n{cell.source[:200]}"
        images.append(pngs[0])
    first_png = tmp_path / "first_plot.png"
    first_png.write_bytes(base64.b64decode(images[0]))
    assert first_png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and first_png.stat().st_size > 5000
