"""The supervised model server: start, readiness gate, log tail, crash detection, restart policy."""
