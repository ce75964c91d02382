"""The policy lab without a screen: `policy check` (a dry run of a policy over recorded runs),
`replay` (a recorded run played back as an ACP agent) and `policy import claude`.

Nothing here imports the ACP SDK: the replay agent speaks JSON-RPC with the standard library, so it
starts in a few tens of milliseconds, and `policy check` runs no agent at all.
"""
