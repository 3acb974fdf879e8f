"""The team's labelled redaction set: strings that are secrets and strings that are not.

Every value is made up (random, of the documented shape); none is a live
credential. Each case is a line as it would appear in a prompt or an answer
the index stores. ``SECRETS``: (kind, line, the part that must never be
stored). ``NOT_SECRETS``: (kind, line) that redaction should leave alone.

Used by tests/sleep/test_redaction_labelled.py (recall must be 100 %, false
positives 0) and bench/redaction.py (prints both, with and without
detect-secrets, and the cost per MB).
"""

from __future__ import annotations

_PEM_RSA = (
    "-----BEGIN RSA PRIVATE KEY-----\n"
    "MIIEowIBAAKCAQEAUZKSonJOLfmkoN877WRAqKit0I8sCjqfYBlmqRpqeaGHe0Fj\n"
    "yDIXj+BNU+1Mzqn0GqzyXtLjqJuSRv/R0be9KPZS6SVeuMUqPV8pc/OYaERgHV9a\n"
    "T+6mR854deN1Bc2/BFnLxTjTuIlxIO6kpjnNGu5wc4eSxQDZTTzaWo/zU5/v7Vrf\n"
    "-----END RSA PRIVATE KEY-----"
)
_PEM_OPENSSH = (
    "-----BEGIN OPENSSH PRIVATE KEY-----\n"
    "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\n"
    "bpCnfu5cdBuST4Lr+5fdDhtSPVkoaJ6YMV8Tp1opjjgXEwoMfmJ6qYRhc7KWh4pLWjPJa9\n"
    "-----END OPENSSH PRIVATE KEY-----"
)
_PEM_EC = (
    "-----BEGIN EC PRIVATE KEY-----\n"
    "MHcCAQEEIL+0+FDZ412M2Scgjnp0zTxKXVn5sIw2jlReJ9SVFyWmoAoGCCqGSM49\n"
    "AwEHoUQDQgAEfTzmVpKXIYRjQI4msQkN+OuORD8FfPEdB4h2R0BllCGoHwRztP7v\n"
    "-----END EC PRIVATE KEY-----"
)

# (kind, line, secret part)
SECRETS: list[tuple[str, str, str]] = [
    ("openai-key", "export OPENAI_API_KEY=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",
     "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"),
    ("openai-key", "client = OpenAI(api_key=\"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\")",
     "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"),
    ("anthropic-key", "use sk-ant-api03-QTm9_DNQPcmrKtSrNKb7zd3ZbhQNALIVMGowSZJtiBR_vqrb3vo5nhxz_G6KNlwyeKZf39JMbsuBWt2qPGHN3oI0QN23ZAA for the eval run",
     "sk-ant-api03-QTm9_DNQPcmrKtSrNKb7zd3ZbhQNALIVMGowSZJtiBR_vqrb3vo5nhxz_G6KNlwyeKZf39JMbsuBWt2qPGHN3oI0QN23ZAA"),
    ("github-token", "git clone https://ghp_nCiCaUkV9QpzpH5kabbZBVwmOfeHa0KWrpbR@github.com/acme/api.git",
     "ghp_nCiCaUkV9QpzpH5kabbZBVwmOfeHa0KWrpbR"),
    ("github-token", "GH_TOKEN gho_sPlh6l5COUpvwiJoCiXMS6AAWJVy7Q3W7VTP expired, refresh it",
     "gho_sPlh6l5COUpvwiJoCiXMS6AAWJVy7Q3W7VTP"),
    ("github-token", "the fine-grained PAT is 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SV",
     "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SV"),
    ("gitlab-token", "curl --header \"PRIVATE-TOKEN: glpat-eqTus91ddBLdqSr3BmP_\" https://gitlab.example.com/api/v4/projects",
     "glpat-eqTus91ddBLdqSr3BmP_"),
    ("slack-token", "SLACK_BOT_TOKEN is xoxb-189281260243-9155890279146-mhTrQh4HfBOGJHp27lMnqhFc",
     "xoxb-189281260243-9155890279146-mhTrQh4HfBOGJHp27lMnqhFc"),
    ("slack-webhook", "post alerts to https://hooks.slack.com/services/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 please",
     "SBBjcZgeiQpLMY7jQK47wEep"),
    ("aws-access-key", "aws configure set aws_access_key_id AKIAR79N9G888O4XITIG", "AKIAR79N9G888O4XITIG"),
    ("aws-secret-key", "aws_secret_access_key = /Z+a1aTYNdGIxVneSFkWMQRHFDplWdgZ010ATjCG",
     "/Z+a1aTYNdGIxVneSFkWMQRHFDplWdgZ010ATjCG"),
    ("aws-secret-key", "the other secret is PnxUVNmOO2WEuYa9hE/3nU0nG8BLc/K4wMUTJzkg+ do not commit it",
     "PnxUVNmOO2WEuYa9hE/3nU0nG8BLc/K4wMUTJzkg+"),
    ("google-api-key", "const MAPS_KEY = 'AIzaRHUhcZ4GKOH6wkG43aG-i-DTbbx8r-3ltYo';", "AIzaRHUhcZ4GKOH6wkG43aG-i-DTbbx8r-3ltYo"),
    ("stripe-key", "stripe.api_key = \"sk_live_szQz2dMlOuRJoq8psYUuJQjs\"", "sk_live_szQz2dMlOuRJoq8psYUuJQjs"),
    ("stripe-key", "restricted key rk_live_a9XlowQ2L9rnhbhpTqEYoioJ for the webhook worker", "rk_live_a9XlowQ2L9rnhbhpTqEYoioJ"),
    ("sendgrid", "SENDGRID=SG.CnEwPl9Ni9N6pVty4GEipW.i9JRYvVNvkNkVGfuASP_-i1RpN3UumdTPc9WScYrPtG",
     "SG.CnEwPl9Ni9N6pVty4GEipW.i9JRYvVNvkNkVGfuASP_-i1RpN3UumdTPc9WScYrPtG"),
    ("twilio", "Client('ACc0d0cc88f2f13f0b8b7b9e1451699f8e', auth)", "ACc0d0cc88f2f13f0b8b7b9e1451699f8e"),
    ("twilio", "TWILIO_AUTH_TOKEN=db7da572a0aa8d654e10cf0eab267a3e", "db7da572a0aa8d654e10cf0eab267a3e"),
    ("npm-token", "//registry.npmjs.org/:_authToken=npm_U30XjYEMkzizrSdrPljZmTeah8P9cCE3BQKo",
     "npm_U30XjYEMkzizrSdrPljZmTeah8P9cCE3BQKo"),
    ("npm-token", "publish with npm_U30XjYEMkzizrSdrPljZmTeah8P9cCE3BQKo from CI", "npm_U30XjYEMkzizrSdrPljZmTeah8P9cCE3BQKo"),
    ("pypi-token", "twine upload -u __token__ -p pypi-AgEIcHlwaS5vcmciNoOEjhvWXYv291GVapMs_NM-xRZ18npN5z9-RigR2Q31Ze_BCHmJIfazfYjbrJu8_ueUepIDWfB0KOD_r1Xpwf0Z6looveqlzMqJrr1J55i-ZcDq9ZgIo0V dist/*",
     "pypi-AgEIcHlwaS5vcmciNoOEjhvWXYv291GVapMs_NM-xRZ18npN5z9-RigR2Q31Ze_BCHmJIfazfYjbrJu8_ueUepIDWfB0KOD_r1Xpwf0Z6looveqlzMqJrr1J55i-ZcDq9ZgIo0V"),
    ("discord-token", "bot.run('MaEnQS7kVshhUJDwAIlro2y4.aExTXn.8-3ysSc0l9-EnF51CCeU0ZZZutq')",
     "MaEnQS7kVshhUJDwAIlro2y4.aExTXn.8-3ysSc0l9-EnF51CCeU0ZZZutq"),
    ("telegram-token", "https://api.telegram.org/bot493867232:AAtbjR54tXOzcoiTtp9UYrO2wcsL-VwrF6k/getMe",
     "493867232:AAtbjR54tXOzcoiTtp9UYrO2wcsL-VwrF6k"),
    ("mailchimp-key", "mailchimp key 8b3fc0c40e58fd222905971ef2685d6e-us14", "8b3fc0c40e58fd222905971ef2685d6e"),
    ("square-secret", "SQUARE_SECRET sq0csp-s2fvqR3NSlnZngz-bQSal09Nji5zNujy7IEazcwYWRg", "sq0csp-s2fvqR3NSlnZngz-bQSal09Nji5zNujy7IEazcwYWRg"),
    ("azure-storage", "DefaultEndpointsProtocol=https;AccountName=acmelogs;AccountKey=ODbWwy4bVthqE+W66nuNLf8waYpYouhkZcqHf4Eiq5cem6l8sxZd5KlOIgKa45dU70UkyEAPwQeq7Wnu0ouzHw==;EndpointSuffix=core.windows.net",
     "ODbWwy4bVthqE+W66nuNLf8waYpYouhkZcqHf4Eiq5cem6l8sxZd5KlOIgKa45dU70UkyEAPwQeq7Wnu0ouzHw=="),
    ("huggingface-token", "huggingface-cli login --token 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", "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"),
    ("huggingface-token", "HF hub access: 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", "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"),
    ("databricks-token", "DATABRICKS_HOST=https://adb-1.azuredatabricks.net with dapi45be050b409afdc1a7725224cd20846f",
     "dapi45be050b409afdc1a7725224cd20846f"),
    ("digitalocean-token", "doctl auth init -t dop_v1_c457ba4f87f5e1397405f223b08fb513f80c12e5d6a44f5fb0a49747fe0c56e7",
     "dop_v1_c457ba4f87f5e1397405f223b08fb513f80c12e5d6a44f5fb0a49747fe0c56e7"),
    ("shopify-token", "X-Shopify-Access-Token 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", "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"),
    ("groq-key", "GROQ 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", "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"),
    ("jwt", "Authorization: Bearer eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiI0MiIsInJvbGUiOiJhZG1pbiJ9.q3v9XnVd0Fz7Cw1yYk2s8rTg5LmB4hJ6pQeWuA0oZxI",
     "eyJzdWIiOiI0MiIsInJvbGUiOiJhZG1pbiJ9.q3v9XnVd0Fz7Cw1yYk2s8rTg5LmB4hJ6pQeWuA0oZxI"),
    ("jwt", "decode eyJhbGciOiJSUzI1NiJ9.eyJpc3MiOiJhY21lIiwiZXhwIjoxNzAwMDAwMDAwfQ.Tk2s8rTg5LmB4hJ6pQeWuA0oZxIq3v9XnVd0Fz7Cw1y and tell me the expiry",
     "eyJpc3MiOiJhY21lIiwiZXhwIjoxNzAwMDAwMDAwfQ.Tk2s8rTg5LmB4hJ6pQeWuA0oZxIq3v9XnVd0Fz7Cw1y"),
    ("private-key", "add this deploy key:\n" + _PEM_RSA, "yDIXj+BNU+1Mzqn0GqzyXtLjqJuSRv/R0be9KPZS6SVeuMUqPV8pc/OYaERgHV9a"),
    ("private-key", _PEM_OPENSSH, "bpCnfu5cdBuST4Lr+5fdDhtSPVkoaJ6YMV8Tp1opjjgXEwoMfmJ6qYRhc7KWh4pLWjPJa9"),
    ("private-key", "cat key.pem\n" + _PEM_EC, "AwEHoUQDQgAEfTzmVpKXIYRjQI4msQkN+OuORD8FfPEdB4h2R0BllCGoHwRztP7v"),
    ("connection-string", "DATABASE_URL=postgresql://app:S3cr3t-pass@db.example.com:5432/prod", "S3cr3t-pass"),
    ("connection-string", "mongosh \"mongodb+srv://admin:hunter2xyz@cluster0.ab1cd.mongodb.net/test\"", "hunter2xyz"),
    ("connection-string", "SQLALCHEMY_URI = 'mysql+pymysql://root:pa55word@localhost/shop'", "pa55word"),
    ("connection-string", "REDIS_URL=redis://:p4ssw0rdRedis@cache:6379/0", "p4ssw0rdRedis"),
    ("connection-string", "amqp://guest:Gu3st-Pass.9@rabbit:5672/ is the broker", "Gu3st-Pass.9"),
    ("bearer-token", "curl -H \"Authorization: Bearer Gl.gHysW0t.slAsEjfdKdu1oRg~3tOJ3fBNiW1Lt\" https://api.acme.dev/v1/me",
     "Gl.gHysW0t.slAsEjfdKdu1oRg~3tOJ3fBNiW1Lt"),
    ("basic-auth", "Authorization: Basic Y2ktYm90OkJ0cWdRajRzZ0RKYjlXMzBwUw==", "Y2ktYm90OkJ0cWdRajRzZ0RKYjlXMzBwUw=="),
    ("token-header", "Authorization: Token 242679ecf1ad4610aedb613ab13fb6e89fe3f5e9", "242679ecf1ad4610aedb613ab13fb6e89fe3f5e9"),
    ("password", "export DB_PASSWORD='Tr0ub4dor&3x-horse'", "Tr0ub4dor&3x-horse"),
    ("password", "password: CorrectHorse9Battery", "CorrectHorse9Battery"),
    ("secret", "{\"client_secret\": \"Wq8.rT-4vLm~02Nb_s7Kd\"}", "Wq8.rT-4vLm~02Nb_s7Kd"),
    ("api-key", "api_key: \"kT9f-2mQx-77Lp-aW3z\"", "kT9f-2mQx-77Lp-aW3z"),
    ("high-entropy", "here is the key DJNfRJwO9neqjTXksC6b4Q4Eo36AHG2w, use it for staging", "DJNfRJwO9neqjTXksC6b4Q4Eo36AHG2w"),
    ("high-entropy", "signing key C3LPX8rBSI6hMbxrxl12hjLfx7Y0h4Ao/lXUuu3j", "C3LPX8rBSI6hMbxrxl12hjLfx7Y0h4Ao/lXUuu3j"),
    ("high-entropy", "{\"auths\": {\"registry.acme.io\": {\"auth\": \"ZGVwbG95ZXI6NmhpTmRQYUtQOWRwWXdlRDVsZWQ=\"}}}",
     "ZGVwbG95ZXI6NmhpTmRQYUtQOWRwWXdlRDVsZWQ="),
    ("crypto-private-key", "import the wallet 0x7e4bcc8399fdd96c87ef3328aa2af4f98cf5c58a19d4df3ff36fa2a436a3fa3c into metamask",
     "0x7e4bcc8399fdd96c87ef3328aa2af4f98cf5c58a19d4df3ff36fa2a436a3fa3c"),
    ("crypto-private-key", "WIF KzhGyMkrRoU66AyRGMmauBtgLqkBDTT2JkAx3sf9vsRa7BetEoEH", "KzhGyMkrRoU66AyRGMmauBtgLqkBDTT2JkAx3sf9vsRa7BetEoEH"),
    # Issue 19: what a person types (a password has no shape: only where it is written says
    # what it is), secrets encoded or wrapped, and 40-hex tokens named as such.
    ("typed-password", "the staging db password is Xk4mQ9vL2pR7, don't share it", "Xk4mQ9vL2pR7"),
    ("typed-password", "the password for the deploy user was Wq7!rT2mZ9 until Friday", "Wq7!rT2mZ9"),
    ("typed-password", "log in with password Vb6nM3kL8qW2 on the admin page", "Vb6nM3kL8qW2"),
    ("mysql-password", "no, use pnpm not npm; mysql -u deploy -pQx7vR2mLk9Zt4Wn ledger_test", "Qx7vR2mLk9Zt4Wn"),
    ("mysql-password", "mysqldump -h db -u root -p'Tr0ub&dor9' shop > dump.sql", "Tr0ub&dor9"),
    ("curl-user-password", "curl -u admin:Hj3kL9qWe2rT5yUi http://127.0.0.1:8080/health", "Hj3kL9qWe2rT5yUi"),
    ("curl-user-password", "curl -s --user 'ci-bot:Zq8pL3mW7vK2' https://api.acme.dev/v1/builds", "Zq8pL3mW7vK2"),
    ("pgpassword", "PGPASSWORD=Pg5ecretW0rd psql -h db.internal -U app app_prod", "Pg5ecretW0rd"),
    ("pgpassword", "export PGPASSWORD=\"Ly8#pQ2mX5vN\"", "Ly8#pQ2mX5vN"),
    ("command-password", "sshpass -p 'S3cr3t!pw77' ssh deploy@10.0.0.5", "S3cr3t!pw77"),
    ("command-password", "docker login -u bot -p Dk9fL2mQ7vX4 registry.acme.io", "Dk9fL2mQ7vX4"),
    ("command-password", "redis-cli -h cache -a R3dis-Pa55w0rd ping", "R3dis-Pa55w0rd"),
    ("command-password", "smbclient //srv/share -U alice%W1nter2024x", "W1nter2024x"),
    ("command-password", "openssl pkcs12 -in cert.p12 -passin pass:P12-Expo7t -nodes", "P12-Expo7t"),
    ("command-password", "ldapsearch -x -D cn=admin,dc=acme -w LdapAdm1n! -b dc=acme", "LdapAdm1n!"),
    ("command-password", "vault-cli login --password Hx9Kq2Lm7Zt --user bob", "Hx9Kq2Lm7Zt"),
    ("pass-variable", "SSHPASS=Mv4kR8pL2qX9 sshpass -e ssh deploy@host", "Mv4kR8pL2qX9"),
    ("hex-token", "GITHUB_TOKEN 3f2a9c0b8d7e6f5a4b3c2d1e0f9a8b7c6d5e4f3a expired, rotate it",
     "3f2a9c0b8d7e6f5a4b3c2d1e0f9a8b7c6d5e4f3a"),
    ("hex-token", "the deploy key is 7d1e4b9a2c8f0e3d6b5a4c9e8f7d2b1a0c3e5f6d", "7d1e4b9a2c8f0e3d6b5a4c9e8f7d2b1a0c3e5f6d"),
    ("hex-token", "our api key 5e8ff9bf55ba3508199d22e984129be6a8f1c2d3 for the status page",
     "5e8ff9bf55ba3508199d22e984129be6a8f1c2d3"),
    ("base64-aws-key-id", "aws id QUtJQUlFUUg3NDZZTkc3QlkzQTQ= from the vault export", "QUtJQUlFUUg3NDZZTkc3QlkzQTQ="),
    ("base64-aws-key-id", "AWS_KEY_B64=QUtJQVJPR1VCQkJBWU4zQk80N08=", "QUtJQVJPR1VCQkJBWU4zQk80N08="),
    ("percent-encoded-key", "key=%73%6B%2D%61%6E%74%2D%61%70%69%30%33%2D%51%54%6D%39%5F%44%4E%51%50%63%6D%72%4B%74%53%72%4E%4B%62%37%7A%64%33%5A%62%68%51%4E%41%4C%49%56%4D%47%6F%77%53%5A%4A%74%69%42%52", "%73%6B%2D%61%6E%74%2D%61%70%69%30%33%2D%51%54%6D%39%5F%44%4E%51%50%63%6D%72%4B%74%53%72%4E%4B%62%37%7A%64%33%5A%62%68%51%4E%41%4C%49%56%4D%47%6F%77%53%5A%4A%74%69%42%52"),
    ("percent-encoded-key", "https://hooks.acme.dev/cb?t=%67%68%70%5F%6E%43%69%43%61%55%6B%56%39%51%70%7A%70%48%35%6B%61%62%62%5A%42%56%77%6D%4F%66%65%48%61%30%4B%57%72%70%62%52&x=1", "%67%68%70%5F%6E%43%69%43%61%55%6B%56%39%51%70%7A%70%48%35%6B%61%62%62%5A%42%56%77%6D%4F%66%65%48%61%30%4B%57%72%70%62%52"),
    ("split-token", "token ghp_nCiCaUkV9QpzpH5kab\nbZBVwmOfeHa0KWrpbR", "ghp_nCiCaUkV9QpzpH5kabbZBVwmOfeHa0KWrpbR"),
    ("split-token", "aws key AKIAR79N9G\n888O4XITIG in the old config", "AKIAR79N9G888O4XITIG"),
    ("split-token", "OPENAI_API_KEY=sk-proj-Q7mZ2xK9pL4v\n    N8rT1wY6bH3cJ5dF0gAa", "sk-proj-Q7mZ2xK9pL4vN8rT1wY6bH3cJ5dF0gAa"),
]

# (kind, line)
NOT_SECRETS: list[tuple[str, str]] = [
    ("git-sha", "revert 9fceb02d0ae598e95dc970b74767f19372d61af8 and rerun the pipeline"),
    ("git-sha", "git checkout e43c435e748c8a0911a581d3d3e7d55bf7b837db -- src/app.py"),
    ("git-sha", "cherry-pick 3f78685 onto release/2.4"),
    ("uuid", "request 123e4567-e89b-12d3-a456-426614174000 failed with 502"),
    ("uuid", "session f47ac10b-58cc-4372-a567-0e02b2c3d479 in ~/.claude/projects"),
    ("base58-address", "send the test BTC to 1AeSoVpsCKtLsjSc81fiGeUHQbnNknrTh7"),
    ("base58-address", "multisig 3ErJwkTXXNFd4wcKKvPdJuABFhkSj8nQ52 holds the treasury"),
    ("base58-address", "genesis address 1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNa"),
    ("base58-address", "the mint address is FofcKoHMYpT3wnbdhoy99vSJGkJmwTABxhcEWRJCmEvz on devnet"),
    ("base58-address", "const PROGRAM_ID = new PublicKey(\"CNK2pezRmnXzEKsdR99rpFk222QoVE4cKo1eremUj6gY\");"),
    ("base58-address", "pin Qmc6xUGwcP9rEMoQXiysPaK9bVA6mvcx1g91Ax9Ho2x1md to the gateway"),
    ("base58-address", "tx signature MQsbUoaeJBm8nSLfviC6VfDAjw42cMzsKuueqKicZQZBMiMFgqumJpDh4ZZC4msRb1psjoQFd72hJrmTr3E7PCS confirmed"),
    ("hex-address", "approve 0xac6e98d83d9d6b43b77e937c31d8be982324179c as spender"),
    ("integrity-hash", "\"integrity\": \"sha512-Jxh7CoQMrMCdrjEQLz0Lod2T0GDSp8jGilGUAaU1i8Xe+luDLhYJ3AHevFS/utwpipeEFe/z34r4cQ1unlwRCA==\""),
    ("integrity-hash", "integrity sha512-cAXfLK8ZQn2A65lvwmmd4qQOncnioI2eZfD9RuMVYIpTqse1zUDQOj8FcjgGK968Tc6/acdQsJshbZ1YLLmXFA== mismatch"),
    ("integrity-hash", "<script src=\"app.js\" integrity=\"sha384-1J4EsgzYx703d9FcZpLPAJ/7YN7w7RKtr9sw/zb9pAEp75xBrnQ+5cSf4Cpsr2jr\"></script>"),
    ("integrity-hash", "requests==2.32.3 --hash=sha256:3ef230b1dc41162420860f2610b5efabebeae6560254bad520cf388f0d11d086"),
    ("integrity-hash", "golang.org/x/net v0.24.0 h1:1LuntGtWabpD4x57nuTiY7j0Gl7gUU5ewePUsLDpwMc="),
    ("integrity-hash", "docker pull ghcr.io/acme/api@sha256:9b085c670b51cac841581970120fe1eaa5d2b35ce0bb9e9f30e4d2bed53d22f3"),
    ("integrity-hash", "checksum: 2a585d8503553c7eba2c03cb90d5523d159e73f9ad4578c94915df166786579e6de0f815bcb4241d785347da151e683542dc69f2d1dfcf16e2f73525351394ad"),
    ("integrity-hash", "checksum = \"9b085c670b51cac841581970120fe1eaa5d2b35ce0bb9e9f30e4d2bed53d22f3\""),
    ("integrity-hash", "oid sha256:3ef230b1dc41162420860f2610b5efabebeae6560254bad520cf388f0d11d086"),
    ("ssh-public-key", "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOk2IHWPDNGCmEO6VDSnUbjUgkQxSvfrkvzAW1OBqFeN dev@laptop"),
    ("path", "/Users/dana/projects/acme-web/src/components/DataTable/VirtualizedRow2.tsx"),
    ("path", "src/__tests__/integration/paymentWebhookHandler.v2.test.ts"),
    ("path", "C:\\Users\\dana\\source\\repos\\Acme.Payments\\src\\Acme.Payments.Api\\Program.cs"),
    ("path", "/nix/store/9krlzvny65gdc8s7kpb6lkx8cd02c25b-python3-3.11.6/bin/python3"),
    ("path", "open .next/static/chunks/pages/_app-3b0c1a2f9e8d7c6b.js in the bundle analyzer"),
    ("identifier", "rename shouldReturn404WhenUserIsNotFoundInDatabase to a clearer name"),
    ("identifier", "AbstractSingletonProxyFactoryBean2 is overkill here"),
    ("identifier", "test_handles_unicode_in_utf8_payloads_correctly_v2 is flaky"),
    ("identifier", "HTTP2ServerPushPromiseFrameHandler drops frames"),
    ("identifier", "await getUserByIdAndOrganizationIdV3Async(userId)"),
    ("identifier", "NSLayoutConstraintAttributeTrailingMargin2x"),
    ("identifier", "the class Button_primary__3xK9a comes from the CSS module"),
    ("identifier", "kubectl logs api-server-7d9f8b6c5d-x2k4p -n prod"),
    ("identifier", "bump @typescript-eslint/eslint-plugin@6.21.0 and eslint-config-next@14.2.3"),
    ("identifier", "arn:aws:iam::123456789012:role/service-role/LambdaExecutionRole2024"),
    ("prose", "set max_tokens=4096 and the token: is passed along to the next step"),
    ("prose", "export TOKEN=$GITHUB_TOKEN and password=<your password>"),
    ("prose", "no, use pnpm instead of npm in src/components/ButtonGroup.tsx"),
    # Issue 19: look like the typed passwords, encoded and wrapped secrets above, but are not.
    ("command", "mysql -u root -p shop_db"),
    ("command", "mysql -u root -p -h db.internal"),
    ("command", "docker run -p 8080:80 -u 1000:1000 nginx"),
    ("command", "ssh -p 2222 deploy@10.0.0.5"),
    ("command", "curl -u \"$API_USER:$API_PASS\" https://api.acme.dev"),
    ("command", "mysql -p$MYSQL_PWD ledger_test"),
    ("command", "echo \"$PW\" | docker login --password-stdin -u bot registry.acme.io"),
    ("command", "pytest -q | tail -1  # PASS=3 FAIL=0"),
    ("command", "git push --force-with-lease origin main"),
    ("prose", "the password is required and must be at least 12 characters"),
    ("prose", "the password is stored in 1Password under staging"),
    ("prose", "password reset emails go out at 9:00"),
    ("prose", "the api key is in ~/.config/acme/credentials.json"),
    ("prose", "the session token is valid for 3600 seconds"),
    ("prose", "the secret is to cache the result"),
    ("git-sha", "the token refresh fix is commit 9fceb02d0ae598e95dc970b74767f19372d61af8"),
    ("git-sha", "git log 9fceb02d0ae598e95dc970b74767f19372d61af8 touched the token refresh"),
    ("git-sha", "9fceb02d0ae598e95dc970b74767f19372d61af8\ne43c435e748c8a0911a581d3d3e7d55bf7b837db"),
    ("base64-text", "base64 of the greeting: aGVsbG8gd29ybGQsIHRoaXMgaXMgYSB0ZXN0"),
    ("percent-encoded", "https://example.com/search?q=how%20to%20use%20pnpm%20workspaces%3F"),
    ("wrapped-lines", "   Compiling serde v1.0.210\n   Compiling tokio v1.40.0"),
    ("wrapped-lines", "commit 9fceb02d0ae598e95dc970b74767f19372d61af8\nAuthor: Dana Example <dana@example.com>"),
    ("wrapped-lines", "AbstractSingletonProxy\nFactoryBean2 is overkill here"),
]
