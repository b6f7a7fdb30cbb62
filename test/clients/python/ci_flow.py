"""CI/CD variables, pipeline control and triggers driven by python-gitlab 3.12, unchanged.

Usage: /usr/bin/python3 test/clients/python/ci_flow.py <url> <admin token> <project id>
The project has a .gitlab-ci.yml on main with one job.

Every check raises on a mismatch, so any failure exits non-zero with a traceback; on success the
observed values are printed as one JSON object on stdout for the calling test to assert on.
"""

import json
import sys
import warnings

import gitlab

warnings.simplefilter("error", UserWarning)


def check(name, actual, expected):
    if actual != expected:
        raise AssertionError(f"{name}: expected {expected!r}, got {actual!r}")


def expect_error(name, error_cls, code, fn):
    try:
        fn()
    except error_cls as err:
        check(f"{name} status", err.response_code, code)
        return err.error_message
    raise AssertionError(f"{name}: expected {error_cls.__name__} {code}, nothing raised")


def main():
    url, token, project_id = sys.argv[1], sys.argv[2], int(sys.argv[3])
    gl = gitlab.Gitlab(url, private_token=token)
    gl.auth()
    project = gl.projects.get(project_id)
    report = {}

    # Instance variables (/admin/ci/variables).
    iv = gl.variables.create({"key": "PY_INSTANCE", "value": "from-instance", "variable_type": "env_var"})
    check("instance create", (iv.key, iv.value, iv.protected, iv.masked), ("PY_INSTANCE", "from-instance", False, False))
    iv.value = "from-instance-2"
    iv.save()
    check("instance get", gl.variables.get("PY_INSTANCE").value, "from-instance-2")
    report["instance_keys"] = [v.key for v in gl.variables.list(all=True)]

    # Group variables.
    group = gl.groups.create({"name": "Py CI", "path": "py-ci"})
    gv = group.variables.create({"key": "PY_GROUP", "value": "g1", "protected": True})
    check("group protected", gv.protected, True)
    check("group list", [v.key for v in group.variables.list()], ["PY_GROUP"])
    group.variables.delete("PY_GROUP")
    check("group after delete", group.variables.list(), [])

    # Project variables: create, masked rule, update, list, get, delete.
    pv = project.variables.create({"key": "PY_PROJECT", "value": "secret-value-123", "masked": True})
    check("project masked", pv.masked, True)
    msg = expect_error("unmaskable", gitlab.exceptions.GitlabCreateError, 400,
                       lambda: project.variables.create({"key": "PY_BAD", "value": "short", "masked": True}))
    check("unmaskable message", msg, {"value": ["is invalid"]})
    expect_error("duplicate", gitlab.exceptions.GitlabCreateError, 400,
                 lambda: project.variables.create({"key": "PY_PROJECT", "value": "again-and-again"}))
    temp = project.variables.create({"key": "PY_TEMP", "value": "t", "variable_type": "file"})
    check("file type", temp.variable_type, "file")
    temp.value = "t2"
    temp.save()
    check("updated", project.variables.get("PY_TEMP").value, "t2")
    temp.delete()
    report["project_keys"] = [v.key for v in project.variables.list(all=True)]

    # A pipeline with variables, left pending for the runner.
    kept = project.pipelines.create({"ref": "main", "variables": [
        {"key": "PY_PIPELINE", "value": "from-pipeline"},
        {"key": "PY_FILE", "value": "file-content", "variable_type": "file"},
    ]})
    check("kept source", kept.source, "api")
    report["kept_variables"] = [(v.key, v.value, v.variable_type) for v in kept.variables.list()]
    report["kept"] = kept.id

    # Cancel, retry, cancel, delete.
    other = project.pipelines.create({"ref": "main"})
    canceled = other.cancel()
    check("cancel status", canceled["status"], "canceled")
    retried = other.retry()
    check("retry status", retried["status"], "pending")
    other.cancel()
    check("after cancel", project.pipelines.get(other.id).status, "canceled")
    other.delete()
    expect_error("deleted", gitlab.exceptions.GitlabGetError, 404, lambda: project.pipelines.get(other.id))
    report["deleted"] = other.id

    # Triggers.
    trigger = project.triggers.create({"description": "py trigger"})
    check("trigger token", trigger.token.startswith("glptt-"), True)
    check("trigger list", [t.id for t in project.triggers.list()], [trigger.id])
    triggered = project.trigger_pipeline("main", trigger.token, variables={"PY_TRIGGERED": "yes"})
    check("trigger source", triggered.source, "trigger")
    report["triggered"] = triggered.id
    report["triggered_variables"] = sorted(v.key for v in project.pipelines.get(triggered.id).variables.list())
    trigger.description = "renamed"
    trigger.save()
    check("trigger renamed", project.triggers.get(trigger.id).description, "renamed")
    expect_error("bad trigger", gitlab.exceptions.GitlabCreateError, 404,
                 lambda: project.trigger_pipeline("main", "glptt-not-a-token"))
    trigger.delete()
    check("triggers left", project.triggers.list(), [])

    print(json.dumps(report))


if __name__ == "__main__":
    main()
