"""course.py's commands load the course secret one way (``cli.load_secret``): a bad secret stops the command with its
error, a missing one is said and the command goes on."""

from course import cli
from course import secret as course_secret


def test_a_secret_that_cannot_be_read_stops_grade_and_nbgrader(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("TOYBOOK_COURSE_DIR", str(tmp_path))
    course_secret.path(tmp_path).write_text("not hex\n", encoding="utf-8")
    for command in ("grade", "nbgrader"):
        assert cli.load_secret(command, "x") is cli.Refused
        err = capsys.readouterr().err
        assert err.startswith(f"course.py {command}: the course secret") and "is not hex" in err
    (tmp_path / "class").mkdir()
    for command, args in {"grade": [str(tmp_path / "class")], "nbgrader": ["--out", str(tmp_path / "nb")]}.items():
        assert cli.main([command, *args]) == 2
        assert f"course.py {command}: the course secret" in capsys.readouterr().err


def test_a_missing_secret_is_said_and_an_existing_one_returned(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("TOYBOOK_COURSE_DIR", str(tmp_path))
    assert cli.load_secret("grade", "each instance is drawn from the name alone") is None
    err = capsys.readouterr().err
    assert "has no secret yet" in err and "drawn from the name alone" in err
    made = course_secret.make(tmp_path)
    assert cli.load_secret("grade", "x") == made and capsys.readouterr().err == ""
