{{/* Resource name of a program: <release>-<program>. */}}
{{- define "storefront.name" -}}
{{- printf "%s-%s" .root.Release.Name .program | trunc 63 | trimSuffix "-" -}}
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

{{/* The cloud service account of a program. */}}
{{- define "storefront.account" -}}
{{- printf "%s@%s" .program .root.Values.identity.accountDomain -}}
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
{{- if eq .program "gateway" -}}catalog customers cart orders search content
{{- else if eq .program "cart" -}}catalog orders
{{- else if eq .program "search" -}}catalog
{{- else if eq .program "orders" -}}catalog
{{- end -}}
{{- end -}}

{{- define "storefront.grpcPort" -}}50051{{- end -}}

{{/* Environment read from Secrets: never rendered from values. */}}
{{- define "storefront.secretEnv" -}}
{{- $v := .root.Values -}}
{{- $redis := and (include "storefront.usesRedis" .) (not $v.redis.deploy) -}}
{{- $customers := eq .program "customers" -}}
{{- if or $redis $customers }}
env:
{{- if $redis }}
  - name: {{ ternary "REDIS_CLUSTER_NODES" "REDIS_URL" (default false $v.redis.cluster) }}
    valueFrom:
      secretKeyRef: {name: {{ $v.redis.existingSecret }}, key: {{ $v.redis.secretKey }}}
{{- end }}
{{- if and $customers $v.customers.signingKey.name }}
  - name: TOKEN_SIGNING_KEY
    valueFrom:
      secretKeyRef: {name: {{ $v.customers.signingKey.name }}, key: {{ $v.customers.signingKey.key }}}
  {{- with $v.customers.signingKey.previousKey }}
  - name: TOKEN_PREVIOUS_SIGNING_KEY
    valueFrom:
      secretKeyRef: {name: {{ $v.customers.signingKey.name }}, key: {{ . }}, optional: true}
  {{- end }}
{{- end }}
{{- if and $customers (eq $v.customers.captcha "recaptcha") }}
  - name: RECAPTCHA_SECRET
    valueFrom:
      secretKeyRef: {name: {{ $v.customers.recaptchaSecret.name }}, key: {{ $v.customers.recaptchaSecret.key }}}
{{- end }}
{{- end }}
{{- end -}}

{{/* What no schema can say: checked at render, each with what to change. */}}
{{- define "storefront.validate" -}}
{{- $v := .Values -}}
{{- if and (eq $v.environment "production") (not $v.image.digest) (has (default "" $v.image.tag) (list "latest" "main" "master" "edge" "")) -}}
{{- if $v.image.tag -}}
{{- fail (printf "image.tag=%s is mutable: production runs a release tag or image.digest" $v.image.tag) -}}
{{- end -}}
{{- end -}}
{{- range $program, $p := $v.programs -}}
{{- if gt (int $p.autoscaling.minReplicas) (int $p.autoscaling.maxReplicas) -}}
{{- fail (printf "programs.%s.autoscaling: minReplicas (%v) is above maxReplicas (%v)" $program $p.autoscaling.minReplicas $p.autoscaling.maxReplicas) -}}
{{- end -}}
{{- if and (eq $program "gateway") $p.slowStart -}}
{{- fail "programs.gateway.slowStart: the gateway serves HTTP, not gRPC; it starts fast and has no startup probe" -}}
{{- end -}}
{{- end -}}
{{- end -}}
