"""Provider credentials: stored keys (0600), device logins (OAuth) and the grants they yield."""
