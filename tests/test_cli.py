"""The dlformat command line: check, inspect, plot, --version, python -m dlformat."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

import dlformat
from dlformat import DLFormatError
from dlformat.cli import main

ROOT = Path(__file__).parents[1]


def documented_format_rows() -> dict[str, tuple[str, str]]:
    """docs/formats.md's table of supported formats, input -> (position, output), left column first."""
    text = (ROOT / "docs" / "formats.md").read_text(encoding="utf-8")
    section = text[text.index("## Supported formats of `positionEmbeddingLayer`") :]
    columns: tuple[dict, dict] = ({}, {})
    for line in section.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) != 7 or cells[0] == "input" or set(cells[0]) == {"-"}:
            continue
        for column, (fmt, position, output) in zip(columns, (cells[0:3], cells[4:7]), strict=True):
            if fmt:
                column[fmt] = (position, output)
    return columns[0] | columns[1]


DOCUMENTED_ROWS = documented_format_rows()
LAYER_FILES = sorted(
    (path.stem for path in (ROOT / "compat_fixtures" / "layers").glob("*.json")), key=str.lower
)


def test_check_of_one_layer_prints_one_ok_line_per_row_and_a_summary(capsys):
    assert main(["check", "positionEmbeddingLayer"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "positionEmbeddingLayer (20 rows, positionEmbeddingLayer.json)"
    assert lines[1].split() == ["input", "expected", "got", "table", "result"]
    rows = lines[2:-1]
    assert len(DOCUMENTED_ROWS) == 20
    assert [line.split()[0] for line in rows] == list(DOCUMENTED_ROWS)
    for line in rows:
        fmt, expected, got, _, result = line.split()
        assert expected == DOCUMENTED_ROWS[fmt][1] and got == expected and result == "ok"
    assert lines[-1] == "positionEmbeddingLayer: all 20 rows ok"


def test_check_runs_every_layer_with_a_summary_each():
    check = subprocess.run(
        [sys.executable, "-m", "dlformat", "check"], capture_output=True, text=True, cwd=ROOT
    )
    assert check.returncode == 0, check.stdout + check.stderr
    lines = check.stdout.splitlines()
    summaries = [line for line in lines if re.fullmatch(r"\w+: all \d+ rows ok", line)]
    assert [line.split(":")[0] for line in summaries] == LAYER_FILES
    total = sum(int(line.split()[2]) for line in summaries)
    assert lines[-1] == f"all {total} rows of {len(LAYER_FILES)} layers ok"


def test_check_of_an_unknown_layer_lists_the_known_ones(capsys):
    assert main(["check", "convolution9dLayer"]) == 1
    captured = capsys.readouterr()
    assert captured.err.strip() == (
        "dlformat check: no format fixture for layer 'convolution9dLayer'; the layers with fixtures are: "
        + ", ".join(LAYER_FILES)
    )


def test_check_exits_1_on_a_mismatch_or_a_missing_layer(tmp_path, capsys):
    table = tmp_path / "wrong.json"
    rows = [
        {"input": "CBT", "output": "CBT", "table": "supported", "sizes": [2, 3, 4]},
        {"input": "SSCB", "output": "SSCB", "table": "dlnetwork", "sizes": [2, 3, 4, 5]},
    ]
    source = "MathWorks documentation"
    table.write_text(
        json.dumps(
            {"layer": "fullyConnectedLayer", "source": source, "construct": {"args": [3]}, "rows": rows}
        )
    )
    assert main(["check", str(table)]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[2].split()[-1] == "ok"
    assert out[3].startswith("SSCB ") and out[3].endswith("output format CB, expected SSCB")
    assert out[-1] == "fullyConnectedLayer: 1 of 2 rows failed"
    table.write_text(
        json.dumps({"layer": "convolution9dLayer", "source": source, "construct": {}, "rows": rows})
    )
    assert main(["check", str(table)]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[2].endswith("dlformat has no layer constructor 'convolution9dLayer' (not ported yet)")
    assert out[-1] == "convolution9dLayer: 2 of 2 rows failed"


def test_module_entry_point():
    check = subprocess.run(
        [sys.executable, "-m", "dlformat", "check", "positionEmbeddingLayer"],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert check.returncode == 0, check.stderr
    assert check.stdout.splitlines()[-1] == "positionEmbeddingLayer: all 20 rows ok"


def test_console_script():
    # the script runs the installed dlformat; -I keeps this checkout off sys.path to find it
    installed = subprocess.run(
        [sys.executable, "-I", "-c", "import importlib.util as u; print(u.find_spec('dlformat').origin)"],
        capture_output=True,
        text=True,
    ).stdout.strip()
    if not installed.startswith(str(ROOT)):
        pytest.skip(f"the dlformat console script runs another copy of dlformat ({installed or 'none'})")
    version = subprocess.run(["dlformat", "--version"], capture_output=True, text=True, check=True)
    assert version.stdout.strip() == f"dlformat {dlformat.__version__}"


def test_no_command_is_a_usage_error(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main([])
    assert exit_info.value.code == 2
    assert "COMMAND" in capsys.readouterr().err


def test_inspect_spells_out_struct_and_cell_paths(tmp_path, capsys):
    import numpy as np

    from dlformat.io import savemat

    cells = np.empty((1, 2), dtype=object)
    cells[0, 0], cells[0, 1] = np.ones((2, 3)), "posemb"
    savemat(
        tmp_path / "s.mat",
        {"s": {"layers": {"posemb": {"Weights": np.ones((64, 128), np.float32)}}}, "c": cells},
    )
    assert main(["inspect", str(tmp_path / "s.mat")]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["variable", "class", "size", "dtype", "bytes"]
    assert lines[1].split() == ["s.layers.posemb.Weights", "single", "64×128", "float32", "32768"]
    assert lines[2].split() == ["c{1}", "double", "2×3", "float64", "48"]
    assert lines[3].split() == ["c{2}", "char", "1×6", "str", "6"]
    assert lines[4] == "3 entries, 32822 bytes of data"


def test_inspect_lists_the_rows_of_a_learnables_file(tmp_path, capsys):
    import torch

    import dlformat as dlf
    from dlformat.io import save_learnables

    net = torch.nn.Sequential(
        dlf.positionEmbeddingLayer(64, 128, Name="posemb"), dlf.positionEmbeddingLayer(8, 16, Name="b")
    )
    save_learnables(net, tmp_path / "l.mat", version="7.3")
    assert main(["inspect", str(tmp_path / "l.mat")]) == 0
    out = capsys.readouterr().out.splitlines()
    start = out.index("") + 1
    assert out[start].split() == ["layer", "parameter", "size", "dtype", "non-finite"]
    assert out[start + 1].split() == ["posemb", "Weights", "64×128", "float32", "-"]
    assert out[start + 2].split() == ["b", "Weights", "8×16", "float32", "-"]
    assert out[-1] == "learnables: 2 rows"


@pytest.mark.parametrize("version", ["7", "7.3"])
def test_inspect_flags_nan_and_inf_learnables(tmp_path, capsys, version):
    import torch

    import dlformat as dlf
    from dlformat.io import save_learnables

    net = torch.nn.Sequential(
        dlf.positionEmbeddingLayer(4, 6, Name="ok"), dlf.positionEmbeddingLayer(4, 6, Name="bad")
    )
    with torch.no_grad():  # MATLAB and load_learnables accept such values; inspect points them out
        net[1].Weights[0, :2] = float("nan")
        net[1].Weights[3, 5] = float("-inf")
    save_learnables(net, tmp_path / "l.mat", version=version)
    assert main(["inspect", str(tmp_path / "l.mat")]) == 0
    out = capsys.readouterr().out.splitlines()
    assert ["ok", "Weights", "4×6", "float32", "-"] in [line.split() for line in out]
    assert ["bad", "Weights", "4×6", "float32", "2", "NaN,", "1", "Inf"] in [line.split() for line in out]
    assert out[-1] == "learnables: 2 rows, 1 with NaN or Inf values"


@pytest.mark.parametrize(
    ("name", "line"),
    [
        # a string array's size lives inside the object: unknown, never the 6×1 of its reference
        ("testmatlabstring_7_WIN64.mat", "matstring1 string (object) ? - -"),
        ("matio_test_tables_v73.mat", "table_numeric table (object) ? - -"),
        ("matio_test_user_defined_v7.mat", "obj_array TestClasses.BasicClass (object) 2×2 - -"),
        ("matio_test_user_defined_v73.mat", "obj_array TestClasses.BasicClass (object) 2×2 - -"),
    ],
)
def test_inspect_lists_matlab_objects_by_class_and_true_size(corpus, capsys, name, line):
    assert main(["inspect", str(corpus / name)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert line.split() in [row.split() for row in lines]


@pytest.mark.parametrize("version", ["7", "7.3"])
def test_inspect_of_a_learnables_file_reads_no_other_values(tmp_path, capsys, monkeypatch, version):
    # inspect once read no value of a learnables file; it now reads the Value cells, to flag NaN
    # and Inf learnables (issue 11, defect 29: MATLAB accepts them without notice). Learnables are
    # small next to the data files inspect lists from headers alone, and nothing else is read.
    import numpy as np

    from dlformat.io import _matv5, _matv73, savemat

    cells = {column: np.empty((1, 1), dtype=object) for column in ("Layer", "Parameter", "Value")}
    cells["Layer"][0, 0], cells["Parameter"][0, 0] = "p", "Weights"
    cells["Value"][0, 0] = np.ones((64, 128), np.float32)
    savemat(tmp_path / "l.mat", cells | {"data": np.ones((500, 400))}, version=version)
    read_v7 = _matv5.read

    def columns_only(path, variables, version):
        assert "data" not in [variable.name for variable in variables], "inspect read another variable"
        return read_v7(path, variables, version)

    monkeypatch.setattr(_matv5, "read", columns_only)
    monkeypatch.setattr(_matv73._Reader, "read", _no_numeric_read(_matv73._Reader.read))
    assert main(["inspect", str(tmp_path / "l.mat")]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[-2].split() == ["p", "Weights", "64×128", "float32", "-"]
    assert ["Value{1}", "single", "64×128", "float32", "32768"] in [line.split() for line in out]
    assert ["data", "double", "500×400", "float64", "1600000"] in [line.split() for line in out]


def _no_numeric_read(read):
    """Reader.read that refuses float data outside the Value cells (a learnables file's values)."""

    def guarded(self, dataset, path):
        if dataset.dtype.kind == "f" and not path.startswith("Value{"):
            raise AssertionError(f"inspect read the values of {path}")
        return read(self, dataset, path)

    return guarded


BROKEN_MAT = b"MATLAB 5.0".ljust(124, b" ") + b"\x00\x01IM" + b"\x0e\x00\x00\x00\xff\xff\xff\x7f"


@pytest.mark.parametrize(
    ("command", "content", "reason"),
    [
        ("check", b"{broken", "fixture file .* is not valid JSON"),
        ("inspect", None, "cannot read .*No such file"),
        ("inspect", b"not a mat file" * 20, "cannot read .*not a MAT-file"),
        ("inspect", BROKEN_MAT, "cannot read .*declares 2147483647 bytes"),
    ],
)
def test_unreadable_input_exits_1_with_a_one_line_reason(tmp_path, capsys, command, content, reason):
    path = tmp_path / "input"
    if content is not None:
        path.write_bytes(content)
    assert main([command, str(path)]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    assert re.match(f"dlformat {command}: {reason}", captured.err)
    assert len(captured.err.strip().splitlines()) == 1 and "Traceback" not in captured.err


PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


@pytest.mark.parametrize(
    ("arguments", "channels", "positions"),
    [
        (["sinusoid", "--dim", "16", "--positions", "20"], 16, 20),
        (["sinusoid", "--layout", "halves", "--dim", "8", "--positions", "5"], 8, 5),
        (["timing-signal", "--dim", "7", "--positions", "9"], 7, 9),
    ],
)
def test_plot_draws_generated_tables(tmp_path, capsys, arguments, channels, positions):
    output = tmp_path / "table.png"
    assert main(["plot", *arguments, "-o", str(output)]) == 0
    assert output.read_bytes().startswith(PNG_MAGIC)
    assert capsys.readouterr().out.strip() == f"wrote {output} ({channels} channels × {positions} positions)"


def test_plot_tables_are_the_encodings():
    import numpy as np

    from dlformat._plot import generated_table

    from .test_functional import tensor2tensor, vaswani

    np.testing.assert_allclose(
        generated_table("sinusoid", 6, 10, "halves", 10000.0),
        vaswani(np.arange(10.0), 6, layout="halves").T,
        atol=2e-6,
    )
    np.testing.assert_allclose(
        generated_table("timing-signal", 5, 10, "interleaved", 10000.0), tensor2tensor(10, 5)[0].T, atol=2e-6
    )


def test_plot_draws_a_mat_variable_by_its_inspect_path(tmp_path, capsys):
    import numpy as np

    from dlformat._plot import variable_table
    from dlformat.io import savemat

    weights = np.arange(12.0).reshape(3, 4)
    cells = np.empty((1, 2), dtype=object)
    cells[0, 0], cells[0, 1] = "x", weights * 2
    savemat(tmp_path / "w.mat", {"s": {"posemb": {"Weights": weights}}, "c": cells})
    assert (
        main(["plot", str(tmp_path / "w.mat"), "--var", "s.posemb.Weights", "-o", str(tmp_path / "w.png")])
        == 0
    )
    assert (tmp_path / "w.png").read_bytes().startswith(PNG_MAGIC)
    np.testing.assert_array_equal(variable_table(tmp_path / "w.mat", "c{2}"), weights * 2)


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["sinusoid", "--dim", "0"], r"--dim must be a positive integer; got 0$"),
        (["sinusoid", "--dim", "-4"], r"--dim must be a positive integer; got -4$"),
        (["sinusoid", "--positions", "0"], r"--positions must be a positive integer; got 0$"),
        (["timing-signal", "--positions", "-1"], r"--positions must be a positive integer; got -1$"),
        (["sinusoid", "--base", "1"], r"--base must be a finite number > 1; got 1.0$"),
        (["sinusoid", "--base", "-2"], r"--base must be a finite number > 1; got -2.0$"),
        (["sinusoid", "--base", "inf"], r"--base must be a finite number > 1; got inf$"),
        (
            ["timing-signal", "--layout", "halves"],
            r"--layout applies to sinusoid only, not to 'timing-signal'$",
        ),
        (["sinusoid", "--var", "x"], r"--var applies to a .mat file only, not to 'sinusoid'$"),
        (
            ["{mat}", "--var", "s.w", "--dim", "3"],
            r"--dim applies to sinusoid and timing-signal only, not to '.*w.mat'$",
        ),
        (["sinusoid", "--layout", "blocks"], r'layout must be one of "interleaved", "halves"'),
        (["sinusoid", "--layout", "halves", "--dim", "3"], r'layout "halves" needs an even dim; got 3$'),
        (["{mat}"], r"plotting a .mat file needs --var NAME"),
        (
            ["sinusiod", "--var", "w"],
            r"'sinusiod' is neither \"sinusoid\", \"timing-signal\" nor an existing .mat file$",
        ),
        (
            ["{mat}", "--var", "s.missing"],
            r"has nothing at 's.missing': the struct s has the fields w, big, empty, z$",
        ),
        (["{mat}", "--var", "s"], r"s must be a 2-D real numeric array to plot; got a 1×1 struct$"),
        (
            ["{mat}", "--var", "s.big"],
            r"s.big must be a 2-D real numeric array to plot; got a 2×3×4 double array$",
        ),
        (
            ["{mat}", "--var", "s.z"],
            r"s.z must be a 2-D real numeric array to plot; got a 1×2 complex double array$",
        ),
        (["{mat}", "--var", "s.empty"], r"s.empty is empty \(0×3\); there is nothing to plot$"),
        (["{mat}", "--var", "c{1}"], r"c\{1\} must be a 2-D real numeric array to plot; got a char row$"),
        (["{mat}", "--var", "s.w[1]"], r"cannot follow '\[1\]' in --var"),
        (
            ["{mat}", "--var", "c{0}"],
            r"c\{0\} has index 0; MATLAB indices start at 1, so an index must be an integer >= 1$",
        ),
        (
            ["{mat}", "--var", "c{-1}"],
            r"c\{-1\} has index -1; MATLAB indices start at 1, so an index must be an integer >= 1$",
        ),
        (
            ["{mat}", "--var", "c{3}"],
            r"has nothing at 'c\{3\}': c has 2 element\(s\), so the index must lie in 1 .. 2$",
        ),
        (["{mat}", "--var", "a(0).w"], r"a\(0\) has index 0; MATLAB indices start at 1"),
        (
            ["{mat}", "--var", "a(3).w"],
            r"has nothing at 'a\(3\)': a has 2 element\(s\), so the index must lie in 1 .. 2$",
        ),
        (
            ["{mat}", "--var", "a.w"],
            r"a is a struct array of 2 element\(s\), not a 1×1 struct, so a.w is not there$",
        ),
        (["{mat}", "--var", "c(2)"], r"c is a 1×2 cell; \(k\) indexes struct arrays here, \{k\} cells$"),
        (["{mat}", "--var", "s{1}"], r"s is a 1×1 struct, not a cell, so \{\} cannot index it$"),
    ],
)
def test_plot_exits_1_with_a_one_line_reason(tmp_path, capsys, arguments, message):
    import numpy as np

    from dlformat.io import savemat

    cells = np.empty((1, 2), dtype=object)
    cells[0, 0], cells[0, 1] = "x", np.ones((2, 2))
    struct = {
        "w": np.ones((2, 2)),
        "big": np.ones((2, 3, 4)),
        "empty": np.zeros((0, 3)),
        "z": np.array([[1j, 2]]),
    }
    savemat(
        tmp_path / "w.mat", {"s": struct, "c": cells, "a": [{"w": np.ones((2, 2))}, {"w": np.ones((3, 3))}]}
    )
    arguments = [a.replace("{mat}", str(tmp_path / "w.mat")) for a in arguments]
    assert main(["plot", *arguments, "-o", str(tmp_path / "x.png")]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    assert len(captured.err.splitlines()) == 1
    assert re.match(f"dlformat plot: .*{message}", captured.err.strip())
    assert not (tmp_path / "x.png").exists()


def test_plot_follows_matlabs_one_based_indices(tmp_path):
    import numpy as np

    from dlformat._plot import variable_table
    from dlformat.io import savemat

    cells = np.empty((2, 2), dtype=object)  # column-major: c{2} is row 2, column 1
    for k, (i, j) in enumerate([(0, 0), (1, 0), (0, 1), (1, 1)], start=1):
        cells[i, j] = np.full((2, 2), float(k))
    savemat(tmp_path / "w.mat", {"c": cells, "a": [{"w": np.zeros((1, 2))}, {"w": np.ones((1, 3))}]})
    for k in range(1, 5):
        np.testing.assert_array_equal(
            variable_table(tmp_path / "w.mat", f"c{{{k}}}"), np.full((2, 2), float(k))
        )
    np.testing.assert_array_equal(variable_table(tmp_path / "w.mat", "a(2).w"), np.ones((1, 3)))
    with pytest.raises(DLFormatError, match=r"^c\{0\} has index 0; MATLAB indices start at 1"):
        variable_table(tmp_path / "w.mat", "c{0}")


def test_plot_draws_non_finite_values_and_always_writes_png(tmp_path, capsys):
    import numpy as np

    from dlformat.io import savemat

    savemat(tmp_path / "w.mat", {"w": np.array([[np.nan, np.inf], [-np.inf, 1.0]])})
    output = tmp_path / "table.dat"
    assert main(["plot", str(tmp_path / "w.mat"), "--var", "w", "-o", str(output)]) == 0
    assert output.read_bytes().startswith(PNG_MAGIC)
    assert capsys.readouterr().out.strip() == f"wrote {output} (2 channels × 2 positions)"


def test_plot_without_matplotlib_names_the_extra(tmp_path, capsys, monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "matplotlib", None)
    assert main(["plot", "sinusoid", "-o", str(tmp_path / "x.png")]) == 1
    assert capsys.readouterr().err == (
        "dlformat plot: drawing needs the optional package matplotlib, the dlformat[plot] extra; install it with "
        'pip install -e ".[plot]" from the dlformat repository\n'
    )


# -- networks MATLAB saved: predict ---------------------------------------------------------------


def _matio() -> None:
    pytest.importorskip("matio")


def test_predict_classifies_vikas_image_as_matlab_did(networks, capsys):
    _matio()
    vikas = str(networks / "vikas_net.mat")
    assert main(["predict", vikas, vikas, "--variable", "I"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["observation", "label", "score"]
    observation, label, score = lines[1].split()
    assert (observation, label) == ("1", "apple_red_yellow_1")  # MATLAB saved test_Pred
    assert 0.5 < float(score) <= 1 and len(lines) == 2


def test_predict_prints_a_regression_output_column_major(networks, tmp_path, capsys):
    _matio()
    from dlformat.io import savemat

    data = np.arange(6, dtype=np.float64).reshape(1, 2, 3) / 6
    savemat(tmp_path / "x.mat", {"X": data})
    net_file = networks / "agoro_gru_ph_model.mat"
    assert (
        main(["predict", str(net_file), str(tmp_path / "x.mat"), "--variable", "X", "--format", "CBT"]) == 0
    )
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "Output: 1(C) × 2(B) × 3(T)"
    assert lines[1].split() == ["1,1", "2,1", "1,2", "2,2", "1,3", "2,3"]
    from dlformat.io import load_network

    expected = load_network(net_file).predict(dlformat.dlarray(torch.as_tensor(data).float(), "CBT"))
    shown = [float(v) for v in lines[2].split()[1:]]
    np.testing.assert_allclose(shown, dlformat.extractdata(expected).numpy().ravel(order="F"), rtol=1e-3)


@pytest.mark.parametrize(
    ("net_file", "variable", "extra", "message"),
    [
        ("vikas_net.mat", "nope", [], r".*vikas_net.mat has no variable\(s\) \['nope'\]; it holds: I, "),
        ("vikas_net.mat", "test_Pred", [], r"variable 'test_Pred' of .* is not a numeric array"),
        ("agoro_gru_ph_model.mat", "I", [], r"give the input's format with --format"),
        ("vikas_net.mat", "I", ["--network", "I"], r"variable 'I' of .* is not a network"),
        (
            "pac48_imagecontrolBC_dlnet.mat",
            "I",
            [],
            r"network 'dlnet' \(dlnetwork\) has 2 layer\(s\) load_network cannot map.*'layer_2' \(class nnet\.cnn\.layer\.FunctionLayer\)",
        ),
    ],
)
def test_predict_errors_exit_1_with_the_reason(networks, capsys, net_file, variable, extra, message):
    _matio()
    argv = ["predict", str(networks / net_file), str(networks / "vikas_net.mat"), "--variable", variable]
    assert main(argv + extra) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    assert re.match(r"dlformat predict: " + message, captured.err, re.DOTALL)


def test_predict_of_an_unreadable_file(tmp_path, capsys):
    (tmp_path / "net.mat").write_text("not a mat file " * 20)
    assert main(["predict", str(tmp_path / "net.mat"), str(tmp_path / "net.mat"), "--variable", "X"]) == 1
    assert capsys.readouterr().err.strip() == (
        f"dlformat predict: cannot read {tmp_path / 'net.mat'}: not a MAT-file: its header lacks the MATLAB "
        "endian marker"
    )


# -- networks MATLAB saved: inspect ---------------------------------------------------------------


def _network_section(out: str, variable: str) -> list[str]:
    """The lines inspect prints for one saved network, its header line first."""
    lines = out.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(f"{variable}: "))
    return lines[start:]


def test_inspect_shows_a_saved_network_as_analyze_network_does(networks, capsys):
    _matio()
    assert main(["inspect", str(networks / "vikas_net.mat")]) == 0
    out = capsys.readouterr().out
    assert re.search(r"^net\s+SeriesNetwork \(object\)", out, re.MULTILINE)  # the variables still listed
    lines = _network_section(out, "net")
    assert lines[0] == "net: SeriesNetwork (saveobj version 1), 15 layers"
    assert lines[1].split() == ["#", "Name", "Class", "Activations", "Learnables"]
    rows = [re.split(r"\s{2,}", line.strip()) for line in lines[2:17]]
    assert [row[1:3] for row in rows[:3]] == [
        ["imageinput", "ImageInputLayer"],
        ["conv_1", "Convolution2DLayer"],
        ["batchnorm_1", "BatchNormalizationLayer"],
    ]
    assert rows[1][3:] == ["320(S) × 320(S) × 8(C) × 1(B)", "Weights 3×3×3×8, Bias 1×1×8"]
    assert rows[12][1:] == ["fc", "FullyConnectedLayer", "3(C) × 1(B)", "Weights 3×204800, Bias 3×1"]
    assert rows[14][1:3] == ["classoutput", "ClassificationOutputLayer"]
    # 3 convolutions (3×3 kernels: 3→8→16→32 channels), 3 batch norms, fc 3×(80·80·32)
    convolutions = sum(9 * c_in * c_out + c_out for c_in, c_out in [(3, 8), (8, 16), (16, 32)])
    total = convolutions + 2 * (8 + 16 + 32) + 3 * 80 * 80 * 32 + 3
    assert lines[17] == f"Total learnables: {total:,}"
    assert lines[18] == (
        "classes of 'classoutput' (3): apple_red_delicios_1, apple_red_yellow_1, apple_rotten_1"
    )


@pytest.mark.parametrize(
    ("file", "variable", "unmapped", "listing"),
    [
        (
            "pac48_imagecontrolBC_dlnet.mat",
            "dlnet",
            [("layer_2", "FunctionLayer"), ("layer_3", "FunctionLayer")],
            r"its MATLAB expression: @\(W\)W\.\^2\./\(sum\(W\.\^2,1\)\+\.01\)",
        ),
        (
            "mimo__trainedNet.mat",
            "net",
            [("layer", "sigmoidLayer"), ("regressionoutput", "sigmoidClassificationLayer")],
            r"'regressionoutput' \(class sigmoidClassificationLayer\): Name='regressionoutput', ResponseNames",
        ),
    ],
)
def test_inspect_lists_the_layers_load_network_cannot_map(
    networks, capsys, file, variable, unmapped, listing
):
    _matio()
    assert main(["inspect", str(networks / file)]) == 0
    lines = _network_section(capsys.readouterr().out, variable)
    rows = [re.split(r"\s{2,}", line.strip()) for line in lines[2:] if re.match(r"\d+\s", line)]
    assert [(row[1], row[2]) for row in rows if row[-1] == "(cannot be mapped)"] == unmapped
    mapped = [row for row in rows if row[-1] != "(cannot be mapped)"]
    assert any(row[-1].startswith("Weights ") for row in mapped)  # the mapped layers keep their learnables
    text = "\n".join(lines)
    assert f"load_network cannot load '{variable}'" in text and re.search(listing, text)
    assert "Total learnables" not in text


def test_inspect_shows_a_saved_layer_array(networks, capsys):
    """vikas_net.mat also saves the layer array the network was trained from (untrained: no
    learnables, no class names); inspect shows it after the network."""
    _matio()
    assert main(["inspect", str(networks / "vikas_net.mat")]) == 0
    lines = _network_section(capsys.readouterr().out, "layers")
    assert lines[0] == "layers: Layer array, 15 layers"
    rows = [re.split(r"\s{2,}", line.strip()) for line in lines[2:17]]
    assert [row[-3] for row in rows[:3]] == [
        "ImageInputLayer",
        "Convolution2DLayer",
        "BatchNormalizationLayer",
    ]
    assert all(row[-1] == "-" for row in rows)  # no learnables saved before training
    assert lines[17] == "Total learnables: 0"


@pytest.mark.parametrize("command", ["convert", "predict"])
def test_convert_and_predict_of_a_layer_array_exit_1(networks, tmp_path, capsys, command):
    """A saved layer array loads as a list of layers, which is not a network (once a raw
    AttributeError)."""
    _matio()
    vikas = str(networks / "vikas_net.mat")
    args = [vikas, str(tmp_path / "out.pt")] if command == "convert" else [vikas, vikas, "--variable", "I"]
    assert main([command, *args, "--network", "layers"]) == 1
    assert re.match(
        rf"dlformat {command}: (a network file|predict) needs a network \(SeriesNetwork, DAGNetwork or "
        r"dlnetwork\); got a list of layers \(a saved Layer array\)",
        capsys.readouterr().err,
    )
    assert not (tmp_path / "out.pt").exists()


def _broken_network_files(networks: Path, folder: Path) -> dict[str, tuple[Path, str, str]]:
    """Real network files whose network variable no longer decodes into a network, as re-saving by
    other tools and damage make them (issue 24 item 5): {case: (file, variable, decodes into)}."""
    import struct

    from tests.io.test_mcos import uncompressed_network

    agoro = (networks / "agoro_gru_ph_model.mat").read_bytes()
    offset = struct.unpack("<Q", agoro[116:124])[0]
    pac48, _, _ = uncompressed_network((networks / "pac48_imagecontrolBC_dlnet.mat").read_bytes())
    reference = pac48.find(struct.pack("<I", 0xDD000000))  # the variable's object reference
    cases = {
        "zeroed subsystem offset": (
            agoro[:116] + bytes(8) + agoro[124:],
            "GRUPHNet",
            "a uint32 array of size 6×1",
        ),
        "stale subsystem offset": (
            agoro[:116] + struct.pack("<Q", offset + 8) + agoro[124:],
            "GRUPHNet",
            "a uint32 array of size 6×1",
        ),
        # the reference's object id (its fifth word) names another object of the file
        "a reference to the layer graph": (
            pac48[: reference + 16] + struct.pack("<I", 2) + pac48[reference + 20 :],
            "dlnet",
            "an object of class nnet.cnn.LayerGraph",
        ),
        "a reference to a layer": (
            pac48[: reference + 16] + struct.pack("<I", 3) + pac48[reference + 20 :],
            "dlnet",
            "an object of class nnet.cnn.layer.ImageInputLayer",
        ),
    }
    made = {}
    for case, (data, variable, decoded) in cases.items():
        path = folder / (case.replace(" ", "_") + ".mat")
        path.write_bytes(data)
        made[case] = (path, variable, decoded)
    return made


@pytest.mark.parametrize(
    "case",
    [
        "zeroed subsystem offset",
        "stale subsystem offset",
        "a reference to the layer graph",
        "a reference to a layer",
    ],
)
def test_inspect_lists_a_network_variable_that_does_not_decode(networks, tmp_path, capsys, case):
    """Once a raw AttributeError ('numpy.ndarray' object has no attribute 'kind'); load_network and
    inspect now give the same reason."""
    _matio()
    from dlformat.io import load_network

    path, variable, decoded = _broken_network_files(networks, tmp_path)[case]
    reason = (
        rf"variable '{variable}' is listed as (SeriesNetwork|dlnetwork) but does not decode into one: "
        rf"it decodes into {re.escape(decoded)} \(the file's object data is broken"
    )
    assert main(["inspect", str(path)]) == 0
    out = capsys.readouterr().out
    assert re.search(rf"^{variable}\s+(SeriesNetwork|dlnetwork) \(object\)", out, re.MULTILINE)
    assert re.search(rf"^{variable}: {reason}", out, re.MULTILINE)
    with pytest.raises(DLFormatError, match=reason):
        load_network(path)


def test_inspect_refuses_a_corrupt_class_attribute(tmp_path, capsys):
    """A v7.3 variable whose MATLAB_class attribute is an array of strings (MATLAB writes one) was
    listed as an object of the joined name (issue 23 item 10)."""
    h5py = pytest.importorskip("h5py")
    path = tmp_path / "x.mat"
    with h5py.File(path, "w", userblock_size=512) as file:
        file.create_dataset("x", data=np.ones((1, 1))).attrs["MATLAB_class"] = np.array(
            [b"double", b"single"]
        )
    with open(path, "r+b") as raw:
        raw.write(b"MATLAB 7.3 MAT-file".ljust(116, b" ") + b" " * 8 + b"\x00\x02IM")
    assert main(["inspect", str(path)]) == 1
    captured = capsys.readouterr()
    assert "(object)" not in captured.out
    assert re.search(r"variable 'x' has a broken MATLAB_class attribute", captured.err)


# -- networks MATLAB saved: convert ---------------------------------------------------------------


def test_convert_writes_a_network_file_that_classifies_as_matlab_did(networks, tmp_path, capsys):
    _matio()
    from dlformat.io import load_network, loadmat

    vikas = networks / "vikas_net.mat"
    assert main(["convert", str(vikas), str(tmp_path / "vikas.pt")]) == 0
    assert capsys.readouterr().out.strip() == (
        f"wrote {tmp_path / 'vikas.pt'} (15 layers; dlformat.io.load_network reads it)"
    )
    net = load_network(tmp_path / "vikas.pt")
    image = dlformat.dlarray(torch.as_tensor(loadmat(vikas, ["I"])["I"]).float(), "SSCB")
    labels, scores = dlformat.classify(net, image)
    assert list(labels) == ["apple_red_yellow_1"]
    _, original = dlformat.classify(load_network(vikas), image)
    torch.testing.assert_close(dlformat.extractdata(scores), dlformat.extractdata(original), rtol=0, atol=0)


def test_convert_of_unmappable_layers_exits_1_with_the_listing(networks, tmp_path, capsys):
    _matio()
    net_file = networks / "mimo__trainedNet.mat"
    assert main(["convert", str(net_file), str(tmp_path / "out.pt")]) == 1
    assert re.match(
        r"dlformat convert: network 'net' \(SeriesNetwork\) has 2 layer\(s\) load_network cannot map",
        capsys.readouterr().err,
    )
    assert not (tmp_path / "out.pt").exists()


# -- --custom-layers: the user's own replacements for layers a file cannot give ------------------
# the replacements of the two files, as a user writes them: examples/saved_network_replacements.py
REPLACEMENTS = Path(__file__).resolve().parents[1] / "examples" / "saved_network_replacements.py"


def test_inspect_with_custom_layers_maps_every_layer(networks, tmp_path, capsys, monkeypatch):
    """A module on the path (MODULE:NAME) for pac48's FunctionLayers; a .py file for mimo's classdef layers."""
    _matio()
    monkeypatch.syspath_prepend(str(REPLACEMENTS.parent))
    pac48 = str(networks / "pac48_imagecontrolBC_dlnet.mat")
    assert main(["inspect", pac48, "--custom-layers", "saved_network_replacements:PAC48"]) == 0
    out = capsys.readouterr().out
    assert "(cannot be mapped)" not in out and "cannot load" not in out
    assert re.search(r"layer_2\s+FunctionLayer", out) and "Total learnables:" in out
    assert (
        main(
            [
                "inspect",
                str(networks / "mimo__trainedNet.mat"),
                "--custom-layers",
                f"{REPLACEMENTS}:MIMO",
            ]
        )
        == 0
    )
    out = capsys.readouterr().out
    assert "(cannot be mapped)" not in out and re.search(r"layer\s+sigmoidLayer", out)


def test_predict_and_convert_with_custom_layers(networks, tmp_path, capsys):
    _matio()
    from dlformat.io import load_network, savemat

    layers = f"{REPLACEMENTS}:MIMO"
    data = np.linspace(-1, 1, 640 * 2).reshape(640, 1, 1, 2)
    savemat(tmp_path / "x.mat", {"X": data})
    net_file = networks / "mimo__trainedNet.mat"
    assert (
        main(
            ["predict", str(net_file), str(tmp_path / "x.mat"), "--variable", "X", "--custom-layers", layers]
        )
        == 0
    )
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "regressionoutput: 16(C) × 2(B)"
    assert main(["convert", str(net_file), str(tmp_path / "mimo.pt"), "--custom-layers", layers]) == 0
    capsys.readouterr()
    converted = load_network(tmp_path / "mimo.pt")  # sigmoidLayer is dlformat's own: plain data
    X = dlformat.dlarray(torch.as_tensor(data).float(), "SSCB")
    shown = np.array([[float(v) for v in line.split()[1:]] for line in lines[2:]])
    np.testing.assert_allclose(shown, dlformat.extractdata(converted.predict(X)).numpy(), rtol=1e-3)


@pytest.mark.parametrize(
    ("module", "spec", "message"),
    [
        (None, "missing_file.py", r"no file missing_file\.py"),
        ("x = 1\n", "layers.py", r"layers\.py has no 'custom_layers' \(a dict of layer factories\)"),
        ("custom_layers = [1]\n", "layers.py", r"layers\.py:custom_layers must be a dict .*; got list"),
        (
            "custom_layers = {'a': 1}\n",
            "layers.py",
            r"layers\.py:custom_layers must be a dict \{class or layer name: factory",
        ),
        ("raise ValueError('boom')\n", "layers.py", r"importing layers\.py failed \(ValueError: boom\)"),
        (None, "no_such_module_here:LAYERS", r"importing no_such_module_here failed \(ModuleNotFoundError"),
    ],
)
def test_custom_layers_errors_exit_1_with_the_reason(
    networks, tmp_path, capsys, monkeypatch, module, spec, message
):
    _matio()
    monkeypatch.chdir(tmp_path)
    if module is not None:
        (tmp_path / "layers.py").write_text(module)
    net_file = str(networks / "mimo__trainedNet.mat")
    assert main(["convert", net_file, str(tmp_path / "out.pt"), "--custom-layers", spec]) == 1
    assert re.match(r"dlformat convert: --custom-layers: " + message, capsys.readouterr().err)
    assert not (tmp_path / "out.pt").exists()


def test_a_custom_layers_file_runs_as_an_imported_module(tmp_path):
    """A dataclass under postponed annotations looks its module up in sys.modules as it is defined."""
    from dlformat.cli import _custom_layers

    (tmp_path / "typed_layers.py").write_text(
        "from __future__ import annotations\n"
        "from dataclasses import dataclass\n"
        "import dlformat as dlf\n\n\n"
        "@dataclass\n"
        "class Settings:\n"
        "    name: str = 'sig'\n\n\n"
        "custom_layers = {'sigmoidLayer': lambda properties: dlf.sigmoidLayer(Name=Settings().name)}\n"
    )
    mapping = _custom_layers(str(tmp_path / "typed_layers.py"))
    assert mapping["sigmoidLayer"]({}).Name == "sig"
