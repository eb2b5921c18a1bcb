"""The sandbox: how omniagent confines a command it runs (Linux: bubblewrap, a seccomp filter, cgroups and rlimits,
an allowlist proxy for the network), and how it shows a workspace at another path (a workspace view).

A layer below the engine, the runtime and the batch, which call it through the names below and nothing else
(`tests/test_layers.py`); it imports none of them. Policy, enforcement and their limits are in docs/security.md.

- `SandboxPolicy` says what one command may see, touch and reach: the mode (`sandboxed` or `unsandboxed`), the
  network (off, on, or an `allowlist` of `NetworkRules`), `hidden` paths (`private_paths`), `ExecLimits`, a
  `workdir` and more `Bind`s.
- `run_command` runs a command under a policy and says how it ended (`Outcome`); it raises `SandboxUnavailable`
  when the sandbox cannot start here, never falling back to running the command unconfined.
- `view_prefix` is the command prefix that shows this machine with a workspace at a workdir (not a sandbox).
- `network_config` and `parse_rules` read the allowlist's rules from their text; `address_refusal`, `resolve` and
  `ip_literal` are the address rules the proxy applies, which the engine's `fetch` shares.

Inside: policy.py (the policy), environment.py (the command's variables), bubblewrap.py, command_line.py and
view.py (the bubblewrap command lines), seccomp.py (the system-call filter), limits.py and cgroups.py (the limits),
network/ (the allowlist, the proxy and its bridge, the address rules), run.py (one command, start to end).
"""

from omniagent.sandbox.errors import SandboxUnavailable
from omniagent.sandbox.limits import HOW_TO_CHANGE, ExecLimits, MiB
from omniagent.sandbox.network.addresses import IPAddress, address_refusal, ip_literal, resolve
from omniagent.sandbox.network.allowlist import DomainRule, NetworkConfig, NetworkRules, network_config, parse_rules
from omniagent.sandbox.policy import UNSANDBOXED, Bind, SandboxMode, SandboxPolicy, private_paths
from omniagent.sandbox.run import Outcome, run_command
from omniagent.sandbox.view import view_prefix

__all__ = [
    "HOW_TO_CHANGE",
    "UNSANDBOXED",
    "Bind",
    "DomainRule",
    "ExecLimits",
    "IPAddress",
    "MiB",
    "NetworkConfig",
    "NetworkRules",
    "Outcome",
    "SandboxMode",
    "SandboxPolicy",
    "SandboxUnavailable",
    "address_refusal",
    "ip_literal",
    "network_config",
    "parse_rules",
    "private_paths",
    "resolve",
    "run_command",
    "view_prefix",
]
