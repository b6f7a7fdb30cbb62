"""Protected branches and tags driven by python-gitlab 3.12, unchanged (its functional
test_project_protected_branches, and the protected tags manager).

Usage: /usr/bin/python3 test/clients/python/protected_refs_flow.py <url> <token> <project id>
The project was made with a README, so its default branch main is protected.

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


def main():
    url, token, project_id = sys.argv[1], sys.argv[2], int(sys.argv[3])
    gl = gitlab.Gitlab(url, private_token=token)
    gl.auth()
    project = gl.projects.get(project_id)
    report = {}

    check("main protected", project.branches.get("main").protected, True)
    p_b = project.protectedbranches.create({"name": "*-stable", "allow_force_push": False})
    check("name", p_b.name, "*-stable")
    check("allow_force_push", p_b.allow_force_push, False)
    if p_b not in project.protectedbranches.list():
        raise AssertionError("*-stable is not listed")
    p_b = project.protectedbranches.get("*-stable")
    check("push level", [l["access_level"] for l in p_b.push_access_levels], [40])

    release = project.protectedbranches.create({
        "name": "release/*", "push_access_level": gitlab.const.DEVELOPER_ACCESS,
        "merge_access_level": gitlab.const.MAINTAINER_ACCESS,
    })
    check("release push", release.push_access_levels[0]["access_level_description"], "Developers + Maintainers")
    try:
        project.protectedbranches.create({"name": "release/*"})
        raise AssertionError("a second protection of release/* was accepted")
    except gitlab.exceptions.GitlabCreateError as err:
        check("conflict status", err.response_code, 409)
        report["conflict"] = err.error_message
    report["branches"] = [b.name for b in project.protectedbranches.list(all=True)]
    project.protectedbranches.get("release/*").delete()
    p_b.delete()
    report["branches_after_delete"] = [b.name for b in project.protectedbranches.list(all=True)]

    tag = project.protectedtags.create({"name": "v*", "create_access_level": gitlab.const.DEVELOPER_ACCESS})
    check("tag level", tag.create_access_levels[0]["access_level"], 30)
    check("tag get", project.protectedtags.get("v*").name, "v*")
    report["tags"] = [t.name for t in project.protectedtags.list()]
    project.protectedtags.get("v*").delete()
    report["tags_after_delete"] = [t.name for t in project.protectedtags.list()]

    print(json.dumps(report))


if __name__ == "__main__":
    main()
