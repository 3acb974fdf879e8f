"""Pi (the ``pi`` coding agent, npm ``@mariozechner/pi-coding-agent``): sessions under
``$PI_CODING_AGENT_DIR/sessions`` (default ``~/.pi/agent``; ``$PI_CODING_AGENT_SESSION_DIR``
names the sessions folder itself), one JSONL file per session
(:mod:`sleep.harvest.sources.pi`; the package's ``docs/session-format.md`` and the files
pi 0.73.1 writes, docs/genuine-files.md). Skills: ``.pi/skills`` and ``.agents/skills`` in the
project, ``~/.pi/agent/skills`` and ``~/.agents/skills`` (the package's ``docs/skills.md``,
"Locations"). Pi has no MCP support by design (its README: "No MCP"), so there is nothing
to integrate. Replayed with ``pi -p --mode json`` (the ``pi`` backend,
:mod:`skillopt_core.backends.pi`)."""

from sleep.hosts.host import Home, Host, Mcp, Sandbox, Skills, Source, Watch

HOME = Home("PI_CODING_AGENT_DIR", {"*": ".pi/agent"}, flag="--pi-home", label="Pi agent folder")
AGENTS = Home(None, {"*": ".agents"})

HOST = Host(
    name="pi",
    label="Pi",
    sources=(Source("pi", "sleep.harvest.sources.pi:PiSource", HOME,
                    watch=(Watch("sessions", names=("*.jsonl",)),)),),
    replay="pi",
    ready="sleep.hosts.ready:pi",
    # /login's tokens in auth.json; a custom provider (baseUrl, apiKey) in models.json.
    sandbox=Sandbox(folder=".pi/agent", folder_env="PI_CODING_AGENT_DIR",
                    auth_files=("auth.json", "models.json", "settings.json"),
                    key_vars=("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GEMINI_API_KEY", "OPENROUTER_API_KEY",
                              "GROQ_API_KEY", "XAI_API_KEY", "MISTRAL_API_KEY", "CEREBRAS_API_KEY", "PI_OFFLINE"),
                    endpoints="sleep.replay.endpoints:pi"),
    # Pi talks to whichever provider the person chose (a custom one: its models.json baseUrl).
    api_hosts=("api.anthropic.com", "api.openai.com", "generativelanguage.googleapis.com", "openrouter.ai",
               "api.groq.com", "api.x.ai", "api.mistral.ai", "api.cerebras.ai"),
    skills=Skills(project=(".pi/skills", ".agents/skills"), user=((HOME, "skills"), (AGENTS, "skills"))),
    mcp=Mcp(),
)
