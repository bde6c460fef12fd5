#!/usr/bin/env bash
# Renders both overlays and has foreign judges check them: kubernetes-validate (strict: no unknown field, against its
# current Kubernetes version) and checkov (no failed check; a skip only as an annotation in the manifest, with its
# reason). The dev overlay is rendered in a copy, with secrets make-secrets.sh makes there. Also checks that the copies
# kustomize needs inside its directories are still equal to their originals.
# Usage: deploy/kubernetes/check.sh [--self-test] [OUT_DIR]   render and judge (the rendered overlays stay in OUT_DIR);
#            --self-test: then show that both judges refuse a flawed manifest (a privileged container, an unknown field)
#        deploy/kubernetes/check.sh --judge FILE...              judge rendered manifests only
# Needs: kubectl (with kustomize v4 or later) or KUBECTL; KONTO_KUBERNETES_VALIDATE and KONTO_CHECKOV (scripts/test.sh
# installs both and names them); for the dev overlay, KONTO (a `konto` executable, for its keys).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
validate=${KONTO_KUBERNETES_VALIDATE:?KONTO_KUBERNETES_VALIDATE names no kubernetes-validate (scripts/test.sh sets it)}
checkov=${KONTO_CHECKOV:?KONTO_CHECKOV names no checkov (scripts/test.sh sets it)}
kubectl=${KUBECTL:-kubectl}

judge() {
    local failed=0
    for file in "$@"; do
        echo "check: kubernetes-validate --strict $file"
        "$validate" --strict --quiet "$file" || failed=1
        echo "check: checkov $file"
        # --skip-download: the checks shipped with this version, nothing fetched.
        (cd "$(dirname "$file")" && "$checkov" -f "$(basename "$file")" --framework kubernetes --compact --quiet --skip-download) || failed=1
    done
    return $failed
}

if [[ ${1:-} == --judge ]]; then
    shift
    judge "$@"
    exit
fi

# kustomize v4 or later (kubectl 1.21+): `labels`, `envs` and inline `patches`. Debian 12's kubernetes-client (1.20,
# kustomize v2) cannot render these overlays.
version=$("$kubectl" version --client 2>/dev/null | sed -n 's/^Kustomize Version: v\([0-9]*\).*/\1/p')
[[ ${version:-0} -ge 4 ]] || { echo "check: $kubectl with kustomize v4 or later is needed (kubectl 1.21+; KUBECTL names another)" >&2; exit 1; }

self_test=false
if [[ ${1:-} == --self-test ]]; then self_test=true; shift; fi
out=${1:-$(mktemp -d)}
mkdir -p "$out"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# kustomize reads only inside a kustomization's directory: these two are copies, which must not drift.
cmp "$here/base/accounts.yaml" "$here/../accounts.yaml" || { echo "check: base/accounts.yaml differs from deploy/accounts.yaml" >&2; exit 1; }
cmp "$here/overlays/dev/init-databases.sh" "$here/../postgres/init-databases.sh" \
    || { echo "check: overlays/dev/init-databases.sh differs from deploy/postgres/init-databases.sh" >&2; exit 1; }
cp -r "$here/.." "$work/deploy"
rm -rf "$work/deploy/kubernetes/overlays/dev/secrets"
"$work/deploy/kubernetes/make-secrets.sh" >/dev/null
for overlay in dev production; do
    "$kubectl" kustomize "$work/deploy/kubernetes/overlays/$overlay" > "$out/$overlay.yaml"
    echo "check: rendered overlays/$overlay ($(grep -c '^kind:' "$out/$overlay.yaml") resources)"
done
# What each overlay is for: dev runs PostgreSQL beside one replica each; production runs two of each, brings no
# PostgreSQL and renders no Secret (those are the operator's).
grep -q '^kind: StatefulSet' "$out/dev.yaml" || { echo "check: the dev overlay has no PostgreSQL" >&2; exit 1; }
! grep -q -E '^kind: (StatefulSet|Secret)' "$out/production.yaml" || { echo "check: production renders PostgreSQL or a Secret" >&2; exit 1; }
[[ $(grep -c '^  replicas: 2$' "$out/production.yaml") -eq 4 ]] || { echo "check: production does not run two of each service" >&2; exit 1; }
judge "$out/dev.yaml" "$out/production.yaml"
echo "check: both overlays render and pass kubernetes-validate and checkov"

if $self_test; then
    # The judges can fail: a Deployment with an unknown field and a privileged container is refused by both.
    cat > "$work/flawed.yaml" <<'YAML'
apiVersion: apps/v1
kind: Deployment
metadata:
  name: flawed
spec:
  replica: 2
  selector:
    matchLabels:
      app: flawed
  template:
    metadata:
      labels:
        app: flawed
    spec:
      containers:
        - name: flawed
          image: konto/gateway:latest
          securityContext:
            privileged: true
YAML
    if verdict=$(judge "$work/flawed.yaml" 2>&1); then
        echo "check: the judges accepted a flawed manifest" >&2; exit 1
    fi
    grep -q "'replica' was unexpected" <<<"$verdict" || { echo "check: kubernetes-validate did not name the unknown field:"; echo "$verdict"; exit 1; } >&2
    grep -q "CKV_K8S_16" <<<"$verdict" || { echo "check: checkov did not refuse the privileged container:"; echo "$verdict"; exit 1; } >&2
    echo "check: both judges refuse a flawed manifest (an unknown field, a privileged container)"
fi
