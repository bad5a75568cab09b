"""d2k-agent: runs kernel-writing agents on D2K-Bench tasks, with and without expert guidance.

One agent per (run, task, arm), identical tools in both arms, a hard turn budget, a transcript and a
workspace snapshot per turn, and a final evaluation by d2k-profile and d2k-analyze outside the
workspace. The output is a run folder that ``d2k-report`` reads. See ``docs/agent.md``.
"""

__version__ = "0.1.0"
