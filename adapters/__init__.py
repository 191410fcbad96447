"""Adapters: the technologies behind the ports (FAISS, ONNX, HTTP APIs, files) and their fakes."""
