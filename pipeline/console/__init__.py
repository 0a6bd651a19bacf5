"""The surveillance room's console in the browser (``paigow console``)."""
