{{/* Resource name of a program: <release>-<program>. */}}
{{- define "storefront.name" -}}
{{- printf "%s-%s" .root.Release.Name .program | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* A program's Service: the gateway's is <release>-gateway; a gRPC
     service's, headless, <release>-<program>-grpc (chart 0.2.0). */}}
{{- define "storefront.serviceName" -}}
{{- if eq .program "gateway" -}}
{{ include "storefront.name" . }}
{{- else -}}
{{ include "storefront.name" . }}-grpc
{{- end -}}
{{- end -}}

{{- define "storefront.selectorLabels" -}}
app.kubernetes.io/name: storefront
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .program }}
{{- end -}}

{{- define "storefront.labels" -}}
{{ include "storefront.selectorLabels" . }}
app.kubernetes.io/version: {{ .root.Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .root.Release.Service }}
app.kubernetes.io/part-of: storefront
helm.sh/chart: {{ printf "%s-%s" .root.Chart.Name .root.Chart.Version }}
{{- end -}}

{{- define "storefront.image" -}}
{{- if .Values.image.digest -}}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest -}}
{{- else -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) -}}
{{- end -}}
{{- end -}}

{{/* Whether programs read projected service-account tokens (not with the
     dev issuer, which stands in for a metadata server). */}}
{{- define "storefront.projected" -}}
{{- if and (eq (default "metadata" .Values.identity.source) "projected") (not .Values.devIssuer.enabled) }}true{{ end -}}
{{- end -}}

{{/* The account a program's identity tokens name: its cloud service
     account, or with projected tokens its Kubernetes ServiceAccount. */}}
{{- define "storefront.account" -}}
{{- if include "storefront.projected" .root -}}
{{- printf "system:serviceaccount:%s:%s" .root.Release.Namespace (include "storefront.name" .) -}}
{{- else -}}
{{- printf "%s@%s" .program .root.Values.identity.accountDomain -}}
{{- end -}}
{{- end -}}

{{- define "storefront.devIssuerUrl" -}}
{{- printf "http://%s-dev-issuer:8091" .Release.Name -}}
{{- end -}}

{{/* Programs that keep state in Redis. */}}
{{- define "storefront.usesRedis" -}}
{{- if has .program (list "gateway" "catalog" "cart" "orders" "customers") }}true{{ end -}}
{{- end -}}

{{/* Downstream programs each program calls over gRPC. */}}
{{- define "storefront.downstreams" -}}
{{- if eq .program "gateway" -}}catalog customers cart orders search content payments
{{- else if eq .program "cart" -}}catalog orders payments
{{- else if eq .program "search" -}}catalog
{{- else if eq .program "orders" -}}catalog payments
{{- end -}}
{{- end -}}

{{- define "storefront.grpcPort" -}}50051{{- end -}}

{{/* Environment read from Secrets: never rendered from values. */}}
{{/* The Secrets' keys a program reads, as JSON [{env, secret, key,
     optional}]: the variable each sets and where it comes from. */}}
{{- define "storefront.secretRefs" -}}
{{- $v := .root.Values -}}
{{- $refs := list -}}
{{- if and (include "storefront.usesRedis" .) (not $v.redis.deploy) -}}
{{- $refs = append $refs (dict "env" (ternary "REDIS_CLUSTER_NODES" "REDIS_URL" (default false $v.redis.cluster)) "secret" $v.redis.existingSecret "key" $v.redis.secretKey) -}}
{{- end -}}
{{- if eq .program "customers" -}}
{{- with $v.customers.signingKey.name -}}
{{- $refs = append $refs (dict "env" "TOKEN_SIGNING_KEY" "secret" . "key" $v.customers.signingKey.key) -}}
{{- with $v.customers.signingKey.previousKey -}}
{{- $refs = append $refs (dict "env" "TOKEN_PREVIOUS_SIGNING_KEY" "secret" $v.customers.signingKey.name "key" . "optional" true) -}}
{{- end -}}
{{- end -}}
{{- if eq $v.customers.captcha "recaptcha" -}}
{{- $refs = append $refs (dict "env" "RECAPTCHA_SECRET" "secret" $v.customers.recaptchaSecret.name "key" $v.customers.recaptchaSecret.key) -}}
{{- end -}}
{{- end -}}
{{- if and (eq .program "payments") (eq $v.payments.provider "stripe") -}}
{{- $refs = append $refs (dict "env" "STRIPE_SECRET_KEY" "secret" $v.payments.stripeSecret.name "key" $v.payments.stripeSecret.secretKey) -}}
{{- $refs = append $refs (dict "env" "STRIPE_WEBHOOK_SECRET" "secret" $v.payments.stripeSecret.name "key" $v.payments.stripeSecret.webhookSecretKey) -}}
{{- end -}}
{{- if and (eq .program "orders") $v.orderWebhooks.urls -}}
{{- $refs = append $refs (dict "env" "ORDER_WEBHOOK_SECRET" "secret" $v.orderWebhooks.secret.name "key" $v.orderWebhooks.secret.key) -}}
{{- end -}}
{{- toJson $refs -}}
{{- end -}}

{{/* Where secret files are mounted (secretsAsFiles). */}}
{{- define "storefront.secretDir" -}}/var/run/secrets/storefront{{- end -}}

{{/* The Secrets as env entries: each file's path (<NAME>_FILE, re-read
     by the program when the kubelet updates it), or with secretsAsFiles
     off the value itself. */}}
{{- define "storefront.secretEnv" -}}
{{- $files := .root.Values.secretsAsFiles -}}
{{- $refs := include "storefront.secretRefs" . | fromJsonArray -}}
{{- if $refs }}
env:
{{- range $refs }}
{{- if $files }}
  - name: {{ .env }}_FILE
    value: {{ printf "%s/%s" (include "storefront.secretDir" $) .env }}
{{- else }}
  - name: {{ .env }}
    valueFrom:
      secretKeyRef: {name: {{ .secret }}, key: {{ .key }}{{ if .optional }}, optional: true{{ end }}}
{{- end }}
{{- end }}
{{- end }}
{{- end -}}

{{/* The OTLP collector an endpoint names: its namespace from a host
     <service>.<namespace>[.svc[.cluster.local]], its port from the URL;
     otherwise networkPolicy.egress.otlp's. JSON: {namespace, port}. */}}
{{- define "storefront.otlpCollector" -}}
{{- $rest := regexReplaceAll "^[a-zA-Z]+://" .endpoint "" | splitList "/" | first -}}
{{- $host := $rest | splitList ":" | first -}}
{{- $port := .otlp.port -}}
{{- if regexMatch ":[0-9]+$" $rest }}{{ $port = regexFind "[0-9]+$" $rest | atoi }}{{ end -}}
{{- $labels := splitList "." $host -}}
{{- $namespace := .otlp.namespace -}}
{{- if and (ge (len $labels) 2) (not (regexMatch "^[0-9.]+$" $host)) (or (eq (len $labels) 2) (eq (index $labels 2) "svc")) }}{{ $namespace = index $labels 1 }}{{ end -}}
{{- dict "namespace" $namespace "port" $port | toJson -}}
{{- end -}}

{{/* networkPolicy.sources entries as NetworkPolicy peers (issue 50, item
     5): a namespace by name, Kubernetes' own selectors, or addresses. */}}
{{- define "storefront.peers" -}}
{{- range . }}
{{- if .cidr }}
- ipBlock:
    cidr: {{ .cidr }}
    {{- with .except }}
    except: {{ toJson . }}
    {{- end }}
{{- else }}
- {{- if .namespace }}
  namespaceSelector:
    matchLabels: {kubernetes.io/metadata.name: {{ .namespace | quote }}}
  {{- else if .namespaceSelector }}
  namespaceSelector: {{ toJson .namespaceSelector }}
  {{- end }}
  {{- with .podSelector }}
  podSelector: {{ toJson . }}
  {{- end }}
{{- end }}
{{- end }}
{{- end -}}

{{/* Sources a NetworkPolicy peer cannot hold together, named. */}}
{{- define "storefront.validateSources" -}}
{{- $np := .Values.networkPolicy -}}
{{- range $old, $key := dict "ingressNamespace" "public" "internalCallersNamespace" "internal" "prometheusNamespace" "metrics" -}}
{{- with index $np $old -}}
{{- fail (printf "networkPolicy.%s is chart 0.1.0's: write networkPolicy.sources.%s: [{namespace: %s}] instead" $old $key .) -}}
{{- end -}}
{{- end -}}
{{- range $port, $list := $np.sources -}}
{{- range $i, $s := $list -}}
{{- if and $s.cidr (or $s.namespace $s.namespaceSelector $s.podSelector) -}}
{{- fail (printf "networkPolicy.sources.%s[%d]: cidr names addresses and cannot be combined with namespace or selectors; make them two sources" $port $i) -}}
{{- end -}}
{{- if and $s.namespace $s.namespaceSelector -}}
{{- fail (printf "networkPolicy.sources.%s[%d]: namespace and namespaceSelector both choose the namespace; keep one" $port $i) -}}
{{- end -}}
{{- if and $s.except (not $s.cidr) -}}
{{- fail (printf "networkPolicy.sources.%s[%d]: except narrows a cidr; this source has none" $port $i) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* What no schema can say: checked at render, each with what to change. */}}
{{- define "storefront.validate" -}}
{{- $v := .Values -}}
{{- include "storefront.validateSources" . -}}
{{- /* The longest name the chart makes is <release>-gateway-internal (a
       Service: at most 63 characters); a cut name would no longer be the
       one the programs' URLs and NetworkPolicies name. */ -}}
{{- if gt (len .Release.Name) 46 -}}
{{- fail (printf "the release name %q is %d characters: at most 46 leave room for -gateway-internal in a 63-character Service name" .Release.Name (len .Release.Name)) -}}
{{- end -}}
{{- $clusterJwks := regexMatch "^https://kubernetes\\.default" (default "" $v.identity.jwksUrl) -}}
{{- if and $v.networkPolicy.enabled $v.networkPolicy.egress.enabled (include "storefront.projected" .) $clusterJwks (not $v.networkPolicy.egress.apiServer.cidrs) -}}
{{- fail "identity.jwksUrl is the cluster's API server and egress policies are on: set networkPolicy.egress.apiServer.cidrs to its addresses, or every identity check (and so every call) would fail" -}}
{{- end -}}
{{- if has $v.environment (list "production" "staging") -}}
{{- range $v.orderWebhooks.urls -}}
{{- if not (hasPrefix "https://" .) -}}
{{- fail (printf "orderWebhooks.urls: %s is not https; production and staging deliver order events over https only" .) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- if and (eq $v.environment "production") (not $v.image.digest) (has (default "" $v.image.tag) (list "latest" "main" "master" "edge" "stable" "prod" "production" "release" "current" "")) -}}
{{- if $v.image.tag -}}
{{- fail (printf "image.tag=%s is mutable: production runs a release tag or image.digest" $v.image.tag) -}}
{{- end -}}
{{- end -}}
{{- if has (int $v.telemetry.metricsPort) (list 8080 8081 50051) -}}
{{- fail (printf "telemetry.metricsPort=%v is a port the programs serve on (8080 and 8081 the gateway's, 50051 each service's gRPC): choose another, such as 9090" $v.telemetry.metricsPort) -}}
{{- end -}}
{{- if and $v.podMonitor.enabled (not $v.podMonitor.managed) (not (.Capabilities.APIVersions.Has "monitoring.coreos.com/v1/PodMonitor")) -}}
{{- fail "podMonitor.enabled: this cluster has no PodMonitor (monitoring.coreos.com/v1, the Prometheus operator's CRD): install the operator first, or use podMonitor.managed on GKE's managed Prometheus, or the prometheus.io annotations" -}}
{{- end -}}
{{- if and $v.podMonitor.managed (not (.Capabilities.APIVersions.Has "monitoring.googleapis.com/v1/PodMonitoring")) -}}
{{- fail "podMonitor.managed: this cluster has no PodMonitoring (monitoring.googleapis.com/v1, GKE's managed Prometheus): enable managed collection first" -}}
{{- end -}}
{{- if eq $v.environment "production" -}}
{{- $placeholders := regexFindAll "[A-Za-z0-9.-]*example\\.(com|org|net)[A-Za-z0-9./-]*" (toJson (omit $v "networkPolicy")) -1 | uniq -}}
{{- if $placeholders -}}
{{- fail (printf "production values still name placeholders (%s): set the shop's own addresses" (join ", " $placeholders)) -}}
{{- end -}}
{{- end -}}
{{- range $program, $p := $v.programs -}}
{{- if gt (int $p.autoscaling.minReplicas) (int $p.autoscaling.maxReplicas) -}}
{{- fail (printf "programs.%s.autoscaling: minReplicas (%v) is above maxReplicas (%v)" $program $p.autoscaling.minReplicas $p.autoscaling.maxReplicas) -}}
{{- end -}}
{{- include "storefront.validateProgram" (dict "root" $ "program" $program) -}}
{{- $request := include "storefront.bytes" $p.resources.requests.memory | int64 -}}
{{- $limit := include "storefront.bytes" $p.resources.limits.memory | int64 -}}
{{- if gt $request $limit -}}
{{- fail (printf "programs.%s.resources: the memory request (%s) is above the limit (%s)" $program $p.resources.requests.memory $p.resources.limits.memory) -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* One program's values that no schema can check (issue 50, item 9):
     each refusal names the value and what to change. */}}
{{- define "storefront.validateProgram" -}}
{{- $v := .root.Values -}}
{{- $program := .program -}}
{{- $p := get $v.programs $program -}}
{{- /* A name the chart already sets would be a second key: one would win. */ -}}
{{- $chart := include "storefront.configmap" (dict "root" .root "program" $program "chartOnly" true) -}}
{{- $secrets := include "storefront.secretEnv" . -}}
{{- $given := dict -}}
{{- if eq $program "gateway" }}{{ $given = merge (dict) $v.gatewayEnv }}{{ end -}}
{{- range $k, $_ := $p.env }}{{ $_ := set $given $k true }}{{ end -}}
{{- range concat (default list $v.extras.env) (default list ($p.extras | default dict).env) }}{{ $_ := set $given .name true }}{{ end -}}
{{- range $k, $_ := $given -}}
{{- if or (regexMatch (printf "(?m)^  %s:" $k) $chart) (regexMatch (printf "(?m)- name: %s(_FILE)?$" (trimSuffix "_FILE" $k)) $secrets) -}}
{{- fail (printf "programs.%s: the env name %s (in programs.%s.env, gatewayEnv or extras.env) is one the chart sets itself (from other values or a Secret): set the value it comes from instead" $program $k $program) -}}
{{- end -}}
{{- end -}}
{{- /* A limit below the request: the pod is refused by the API server. */ -}}
{{- with $p.resources.limits.cpu -}}
{{- $limit := include "storefront.millicores" . | int64 -}}
{{- $request := include "storefront.millicores" (default "0" $p.resources.requests.cpu) | int64 -}}
{{- if gt $request $limit -}}
{{- fail (printf "programs.%s.resources: the CPU request (%v) is above the limit (%v)" $program $p.resources.requests.cpu .) -}}
{{- end -}}
{{- end -}}
{{- /* A selector label in podLabels: the Deployment would not select its pods. */ -}}
{{- $selector := include "storefront.selectorLabels" (dict "root" .root "program" $program) | fromYaml -}}
{{- range $labels := list $v.scheduling.podLabels (($p.scheduling | default dict).podLabels) -}}
{{- range $k, $_ := $labels -}}
{{- if hasKey $selector $k -}}
{{- fail (printf "podLabels.%s (programs.%s): the chart selects pods by this label; choose another name" $k $program) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* A CPU quantity (250m, 0.5, 2) in millicores. */}}
{{- define "storefront.millicores" -}}
{{- $q := toString . -}}
{{- if hasSuffix "m" $q -}}{{ trimSuffix "m" $q | int64 }}{{- else -}}{{ mulf ($q | float64) 1000 | int64 }}{{- end -}}
{{- end -}}

{{/* A memory quantity (the schema's pattern: 512Mi, 2Gi, 1.5G) in bytes. */}}
{{- define "storefront.bytes" -}}
{{- $q := toString . -}}
{{- $units := dict "Ki" 1024 "Mi" 1048576 "Gi" 1073741824 "Ti" 1099511627776 "k" 1000 "M" 1000000 "G" 1000000000 "T" 1000000000000 -}}
{{- $unit := regexFind "[A-Za-z]+$" $q -}}
{{- $n := trimSuffix $unit $q | float64 -}}
{{- mulf $n (get $units $unit | default 1) | int64 -}}
{{- end -}}

{{/* What rolls a program's pods when what it reads changes outside its
     ConfigMap: rollout.secretsChecksum when the tool that changes Secrets
     feeds it (Argo CD, Flux, External Secrets cannot be read by lookup);
     otherwise a hash of the resourceVersions (never the values) of the
     Secrets and ConfigMaps it reads, as the cluster holds them at install
     or upgrade (`helm template` reads none). Secret files are re-read
     without a restart; the hash restarts what cannot be (a moved Redis). */}}
{{- define "storefront.secretsChecksum" -}}
{{- $v := .root.Values -}}
{{- if $v.rollout.secretsChecksum -}}
{{- $v.rollout.secretsChecksum | toString | sha256sum -}}
{{- else -}}
{{- $secrets := list -}}
{{- range (include "storefront.secretRefs" . | fromJsonArray) }}{{ $secrets = append $secrets .secret }}{{ end -}}
{{- range (get $v.programs .program).envFrom }}{{ with .secretRef }}{{ $secrets = append $secrets .name }}{{ end }}{{ end -}}
{{- $maps := list -}}
{{- if and (include "storefront.projected" .root) $v.identity.projected.jwksCaConfigMap }}{{ $maps = append $maps $v.identity.projected.jwksCaConfigMap }}{{ end -}}
{{- if and $v.redis.caConfigMap (include "storefront.usesRedis" .) }}{{ $maps = append $maps $v.redis.caConfigMap }}{{ end -}}
{{- if and (has .program (list "catalog" "search" "cart" "customers")) $v.markets.configMap }}{{ $maps = append $maps $v.markets.configMap }}{{ end -}}
{{- $versions := dict -}}
{{- range $kind, $names := dict "Secret" $secrets "ConfigMap" $maps -}}
{{- range ($names | uniq | sortAlpha) -}}
{{- $found := lookup "v1" $kind $.root.Release.Namespace . | default dict -}}
{{- $meta := get $found "metadata" | default dict -}}
{{- $_ := set $versions (printf "%s/%s" $kind .) (get $meta "resourceVersion" | default "") -}}
{{- end -}}
{{- end -}}
{{- $versions | toJson | sha256sum -}}
{{- end -}}
{{- end -}}
