"""The diagnostics report: one zip with what a helper needs to see (scan, doctor, plan, probe, engine, diagnoses,
logs), redacted (``redact``) and written atomically (``bundle``)."""
