"""d2k-report: the paired comparison of runs (the same agent with and without expert guidance).

Reads run folders (``runs/<run>/run.toml`` plus the run's d2k-analyze and d2k-profile results)
and writes the headline, per-task, design-item and property tables as CSV, Markdown and JSON,
and one self-contained HTML page with plots. Metric definitions come from
:mod:`d2k_spec.run_metrics`; this package only joins, aggregates and renders.
"""

from .profile_tables import ProfileTables, load_profile
from .report import ReportError, build_report, write_outputs

__all__ = ["ProfileTables", "ReportError", "build_report", "load_profile", "write_outputs"]
