"""The Claude Code adapter: stream-json (launch, control, info, translate, tools, usage)."""
