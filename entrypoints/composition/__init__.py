"""The composition root: where the server's settings are resolved and the one place that
builds real adapters and wires them into the application's services."""
