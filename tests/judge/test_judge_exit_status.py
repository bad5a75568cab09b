"""A judge request that fails for good makes the analysis incomplete: exit status 1, the failure
listed once on stderr (d2k_spec.exit_codes), the report still written."""

from __future__ import annotations

from conftest import ONLINE

from d2k_analyze.cli import main


def test_a_failed_judge_request_exits_1(fake, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.url)
    fake.script.extend(["malformed"] * 10)  # every answer unusable: the request fails after its retries
    out = tmp_path / "r.md"
    rc = main([str(ONLINE), "--no-compiled", "--jobs", "1", "--no-judge-cache", "--format", "md", "--out", str(out)])
    err = capsys.readouterr().err
    assert rc == 1 and out.is_file()
    lines = [ln for ln in err.splitlines() if ln.startswith("d2k-analyze: incomplete:") and "judge (grade)" in ln]
    assert len(lines) == 1, err
    assert "1 of 1 submission could not be analysed in full" in err
