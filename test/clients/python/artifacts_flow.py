"""python-gitlab 3.12 against kiln's job artifacts API (issue 16, item 1).

Arguments: base URL, token, project id, job id. Prints one JSON report: sizes and SHA-256 digests
of what each call returned, so the test compares them with the files it uploaded.
"""
import hashlib
import json
import sys

import gitlab


def digest(data):
    return hashlib.sha256(data).hexdigest()


def main():
    url, token, project_id, job_id = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    gl = gitlab.Gitlab(url, private_token=token)
    project = gl.projects.get(project_id, lazy=True)
    job = project.jobs.get(job_id)
    report = {"expire_before_keep": job.artifacts_expire_at}

    archive = job.artifacts()
    report["archive"] = {"size": len(archive), "sha256": digest(archive)}

    chunks = []
    job.artifacts(streamed=True, action=chunks.append)
    report["archive_streamed_sha256"] = digest(b"".join(chunks))

    report["entry"] = job.artifact("out/report.txt").decode()
    report["by_ref"] = digest(project.artifacts.download("main", "build"))
    report["raw_by_ref"] = project.artifacts.raw("main", "out/report.txt", "build").decode()

    try:
        job.artifact("out/missing.txt")
        report["missing"] = "found"
    except gitlab.exceptions.GitlabGetError as err:
        report["missing"] = err.response_code

    job.keep_artifacts()
    report["expire_after_keep"] = project.jobs.get(job_id).artifacts_expire_at

    job.delete_artifacts()
    try:
        job.artifacts()
        report["after_delete"] = "found"
    except gitlab.exceptions.GitlabGetError as err:
        report["after_delete"] = err.response_code

    print(json.dumps(report))


if __name__ == "__main__":
    main()
