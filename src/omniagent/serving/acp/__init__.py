"""ACP served over hub sessions, for any agent: one `AcpAgent` per connection, whatever carries its lines."""
