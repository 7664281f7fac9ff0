"""The local review page (``reverie ui``)."""
