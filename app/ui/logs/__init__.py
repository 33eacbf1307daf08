"""The server log view: a tail that stays fast on long logs, opened only when asked for."""
