"""scripts/face_up_stills.py: the face-up figures of a look, from viewed stills."""

from vision.synth.stills import make_stills


def test_the_face_up_figures_of_viewed_stills(tmp_path, load_script, capsys):
    stills = make_stills(2, tmp_path / "stills", "val", dr="training")
    load_script("view_stills").view_split(stills, tmp_path / "view", "val")
    script = load_script("face_up_stills")
    assert script.main([str(tmp_path / "view")]) == 0
    (line,) = capsys.readouterr().out.splitlines()
    assert line.startswith("view: backs ") and "turned up 0 -> 0" in line  # no back turns up


def test_a_folder_without_viewed_stills_is_one_line_and_exit_2(tmp_path, load_script, capsys):
    assert load_script("face_up_stills").main([str(tmp_path)]) == 2
    assert capsys.readouterr().err.count("\n") == 1
