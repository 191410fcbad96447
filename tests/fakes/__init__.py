"""Fakes of the outside world for tests: real servers on 127.0.0.1 speaking third-party APIs."""
