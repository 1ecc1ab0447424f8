"""logtrap: find crawler traps in web-server access logs."""
