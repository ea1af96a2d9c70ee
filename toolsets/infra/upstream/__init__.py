"""Clients for real upstream APIs (httpx, created lazily)."""
