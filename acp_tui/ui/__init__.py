"""The Textual supervisor. It renders what the core's runs emit and calls `dispose`; no ACP here."""
