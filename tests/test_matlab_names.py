"""docs/matlab_names.md lists exactly the MATLAB names dlformat exports, and an unported MATLAB
name says so instead of suggesting a near miss."""

from __future__ import annotations

import re
import subprocess
import sys
import traceback
from pathlib import Path

import pytest

import dlformat
from dlformat import functional

PAGE = Path(__file__).parents[1] / "docs" / "matlab_names.md"
OWN_SECTION = "dlformat's own public names"

# public, but dlformat's own names rather than MATLAB's (each listed in the page's last section)
OWN = {
    "dlf.DLFormatError",
    "dlf.LayerError",
    "dlf.RotaryEmbedding",
    "dlf.__version__",
    "dlf.functional",
    "dlf.training",
    "dlf.LegacyTrainingInfo",
    "dlf.RngSettings",
    "dlf.param_groups",
    "dlf.collate",
    "dlf.functional.position_embedding",
    "dlf.functional.rotary",
    "dlf.functional.sinusoid",
    "dlf.functional.timing_signal_1d",
}
SPELLING = re.compile(r"`(dlf\.(?:functional\.)?\w+)`")


def sections() -> dict[str, str]:
    parts = re.split(r"^## (.+)$", PAGE.read_text(), flags=re.M)
    return dict(zip(parts[1::2], parts[2::2], strict=True))


def table_rows() -> list[tuple[str, list[str], list[str]]]:
    """(section, MATLAB names, dlformat spellings) for every table row outside the own-names section."""
    rows = []
    for title, body in sections().items():
        if title == OWN_SECTION:
            continue
        for line in body.splitlines():
            cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
            if not line.startswith("|") or cells[0] in ("MATLAB", "---"):
                continue
            rows.append((title, re.findall(r"`([\w.]+)`", cells[0]), SPELLING.findall(cells[1])))
    return rows


def exported() -> set[str]:
    return {f"dlf.{name}" for name in dlformat.__all__} | {
        f"dlf.functional.{name}" for name in functional.__all__
    }


def resolve(spelling: str) -> object:
    value: object = dlformat
    for part in spelling.split(".")[1:]:
        value = getattr(value, part)
    return value


def test_the_page_has_its_groups_and_rows():
    rows = table_rows()
    assert set(sections()) == {
        "Formatted arrays: `dlarray`",
        "Layers",
        "Networks: `dlnetwork`, `layerGraph`",
        "Learn-rate and L2 factors",
        "Deep learning functions on `dlarray` (the functional core)",
        "Loss functions",
        "Custom training loops",
        "Training: `trainingOptions`, `trainnet`, `trainNetwork`",
        "MATLAB functions on `dlarray`",
        "Categorical arrays: `categorical`",
        "GPU and random numbers",
        OWN_SECTION,
    }
    assert len(rows) == 5 + 79 + 19 + 4 + 20 + 8 + 19 + 17 + 101 + 19 + 6
    for section, matlab, spellings in rows:
        assert matlab and spellings, f"{section}: a row without a MATLAB name or a dlformat spelling"


def test_the_tables_list_exactly_the_matlab_named_public_names():
    listed = [spelling for _, _, spellings in table_rows() for spelling in spellings]
    assert len(listed) == len(set(listed)), "a name is listed twice"
    assert set(listed) == exported() - OWN
    assert OWN <= exported()


def test_the_own_names_section_lists_the_rest():
    own = SPELLING.findall(sections()[OWN_SECTION])
    assert sorted(own) == sorted(OWN)


def test_each_dlformat_spelling_is_the_matlab_name_and_exists():
    """Functions keep MATLAB's spelling exactly; classes match the last part of MATLAB's class name
    (nnet.cnn.layer.GELULayer -> GELULayer; the dlarray object -> DLArray)."""
    for section, matlab, spellings in table_rows():
        names = {name.rsplit(".", 1)[-1] for name in matlab}
        for spelling in spellings:
            python_name = spelling.rsplit(".", 1)[-1]
            if python_name[0].islower():
                assert python_name in names, f"{section}: {spelling} is not spelt as MATLAB's {sorted(names)}"
            else:
                assert python_name.lower() in {name.lower() for name in names}, f"{section}: {spelling}"
            assert resolve(spelling) is not None


def test_every_reference_is_a_mathworks_help_page():
    links = re.findall(r"\]\((https?://[^)]+)\)", PAGE.read_text())
    assert len(links) == len(table_rows())  # one reference per row
    assert all(link.startswith("https://www.mathworks.com/help/") for link in links)


UNPORTED = "yolov4ObjectDetector"  # a MATLAB function dlformat does not port
NEAR_MISS = "fullyconnectedLayer"  # one letter off dlf.fullyConnectedLayer
# CPython sets name and obj on an AttributeError from a module __getattr__ unless obj is already
# set, and offers "Did you mean" from them; dlformat raises AttributeError(..., obj=None)


def attribute_error(name: str) -> AttributeError:
    with pytest.raises(AttributeError) as caught:
        getattr(dlformat, name)
    return caught.value


@pytest.mark.parametrize("name", [UNPORTED, NEAR_MISS])
def test_an_unported_name_says_so_and_where_the_ported_names_are(name):
    error = attribute_error(name)
    assert str(error) == (
        f"dlformat has no '{name}': if it is a MATLAB function or layer, dlformat does not port it yet. "
        "The ported MATLAB names are listed in docs/matlab_names.md (and in dlformat.__all__)"
    )
    assert "Did you mean" not in "".join(traceback.format_exception_only(type(error), error))
    assert not hasattr(dlformat, name)


def test_the_error_carries_no_name_to_suggest_from():
    assert attribute_error(UNPORTED).name is None


def run(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=False,
        cwd=PAGE.parents[1],  # the checkout's dlformat
    )


def test_the_interpreter_prints_the_message_and_no_suggestion():
    done = run(f"import dlformat as dlf; dlf.{UNPORTED}")
    assert done.returncode == 1
    assert "does not port it yet" in done.stderr and "docs/matlab_names.md" in done.stderr
    assert "Did you mean" not in done.stderr


def test_the_interpreter_suggests_no_near_miss():
    done = run(f"import dlformat as dlf; dlf.{NEAR_MISS}")
    assert done.returncode == 1 and "does not port it yet" in done.stderr
    assert "Did you mean" not in done.stderr
