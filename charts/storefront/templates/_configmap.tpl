{{/* One program's ConfigMap: rendered by configmap.yaml, and hashed into
     the program's own checksum annotation (a change restarts only it). */}}
{{- define "storefront.configmap" -}}
{{- $root := .root -}}
{{- $program := .program -}}
{{- $p := get $root.Values.programs $program -}}
{{- $ctx := . -}}
apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ include "storefront.name" $ctx }}
  namespace: {{ $root.Release.Namespace | quote }}
  labels:
    {{- include "storefront.labels" $ctx | nindent 4 }}
data:
  APP_ENV: {{ $root.Values.environment | quote }}
  RUST_LOG: {{ $root.Values.telemetry.logLevel | quote }}
  OTEL_SERVICE_NAME: {{ $program | quote }}
  {{- with $root.Values.telemetry.otlpEndpoint }}
  OTEL_EXPORTER_OTLP_ENDPOINT: {{ . | quote }}
  {{- end }}
  METRICS_LISTEN_ADDR: {{ printf "0.0.0.0:%v" $root.Values.telemetry.metricsPort | quote }}
  SHUTDOWN_DELAY_MS: {{ $root.Values.shutdown.delayMs | quote }}
  DRAIN_TIMEOUT_MS: {{ $root.Values.shutdown.drainTimeoutMs | quote }}
  {{- if $root.Values.devIssuer.enabled }}
  IDENTITY_JWKS_URL: {{ printf "%s/oauth2/v3/certs" (include "storefront.devIssuerUrl" $root) | quote }}
  {{- else }}
  IDENTITY_ISSUER: {{ $root.Values.identity.issuer | quote }}
  IDENTITY_JWKS_URL: {{ $root.Values.identity.jwksUrl | quote }}
  {{- if and (include "storefront.projected" $root) $root.Values.identity.projected.jwksCaConfigMap }}
  IDENTITY_JWKS_CA_FILE: "/etc/storefront/identity-ca/ca.crt"
  {{- end }}
  {{- end }}
  {{- if $root.Values.redis.deploy }}
  {{- if include "storefront.usesRedis" $ctx }}
  REDIS_URL: {{ printf "redis://%s-redis:6379/" $root.Release.Name | quote }}
  {{- end }}
  {{- end }}
  {{- if and $root.Values.redis.caConfigMap (include "storefront.usesRedis" $ctx) }}
  REDIS_CA_FILE: "/etc/storefront/redis-ca/ca.crt"
  {{- end }}
  {{- if and $root.Values.markets.configMap (has $program (list "catalog" "search" "cart" "customers")) }}
  MARKETS_FILE: {{ printf "/etc/storefront/markets/%s" $root.Values.markets.key | quote }}
  {{- end }}
  {{- if eq $program "gateway" }}
  LISTEN_ADDR: "0.0.0.0:8080"
  INTERNAL_LISTEN_ADDR: "0.0.0.0:8081"
  INTERNAL_CALLERS: {{ join "," $root.Values.identity.internalCallers | quote }}
  {{- /* The document names the address the Ingress serves it at. */}}
  {{- if and $root.Values.ingress.enabled (not (hasKey $root.Values.gatewayEnv "OPENAPI_SERVERS")) }}
  OPENAPI_SERVERS: {{ printf "https://%s" $root.Values.ingress.host | quote }}
  {{- end }}
  {{- if not .chartOnly }}
  {{- range $k, $v := $root.Values.gatewayEnv }}
  {{ $k }}: {{ $v | quote }}
  {{- end }}
  {{- end }}
  {{- else }}
  LISTEN_ADDR: {{ printf "0.0.0.0:%s" (include "storefront.grpcPort" $root) | quote }}
  {{- /* The methods a calling service uses (the code's, not a setting):
         it may call only those; the gateway may call every method. Helm
         cannot read services/platform/src/topology.rs, where they are
         declared: tests/e2e/deploy/chart.rs holds this list to it. */}}
  {{- $calls := dict "catalog" (dict "cart" "AdjustStock|AdjustStockBatch|GetProduct|GetProducts|ListCategories" "orders" "AdjustStock" "search" "ListChanges|ListCategories|ExportProducts|RequestReindex") "orders" (dict "cart" "CreateOrder|CreateOrderBatch") "payments" (dict "cart" "CreatePayment|ConfirmPayment|GetPayment|VoidPayment|VerifyWebhook|VerifyWebhookBatch" "orders" "GetPayment|CapturePayment|VoidPayment|RefundPayment") }}
  {{- $accounts := list }}
  {{- range $p.callers }}
  {{- $account := include "storefront.account" (dict "root" $root "program" .) }}
  {{- $methods := get (get $calls $program | default dict) . }}
  {{- if $methods }}
  {{- $account = printf "%s=%s" $account $methods }}
  {{- end }}
  {{- $accounts = append $accounts $account }}
  {{- end }}
  ALLOWED_CALLERS: {{ join "," $accounts | quote }}
  {{- end }}
  {{- $downstreams := include "storefront.downstreams" $ctx | splitList " " | compact }}
  {{- if $downstreams }}
  {{- if $root.Values.devIssuer.enabled }}
  IDENTITY_TOKEN_URL: {{ printf "%s/computeMetadata/v1/instance/service-accounts/%s/identity" (include "storefront.devIssuerUrl" $root) (include "storefront.account" $ctx) | quote }}
  {{- else if include "storefront.projected" $root }}
  IDENTITY_TOKEN_DIR: "/var/run/storefront/identity"
  {{- else }}
  IDENTITY_TOKEN_URL: {{ $root.Values.identity.tokenUrl | quote }}
  {{- end }}
  {{- range $downstreams }}
  {{ upper . }}_URL: {{ printf "http://%s:%s" (include "storefront.serviceName" (dict "root" $root "program" .)) (include "storefront.grpcPort" $root) | quote }}
  {{- end }}
  {{- end }}
  {{- if eq $program "customers" }}
  CAPTCHA_VERIFIER: {{ $root.Values.customers.captcha | quote }}
  {{- if eq $root.Values.customers.captcha "recaptcha" }}
  RECAPTCHA_HOSTNAMES: {{ join "," $root.Values.customers.recaptchaHostnames | quote }}
  {{- end }}
  {{- end }}
  {{- if eq $program "payments" }}
  PAYMENT_PROVIDER: {{ $root.Values.payments.provider | quote }}
  {{- with $root.Values.payments.stripeApiBase }}
  STRIPE_API_BASE: {{ . | quote }}
  {{- end }}
  {{- end }}
  {{- if and (eq $program "orders") $root.Values.orderWebhooks.urls }}
  ORDER_WEBHOOK_URLS: {{ join "," $root.Values.orderWebhooks.urls | quote }}
  {{- end }}
  {{- if and (eq $program "content") $root.Values.content.configMap }}
  CONTENT_DIR: "/content"
  {{- end }}
  {{- if not .chartOnly }}
  {{- range $k, $v := $p.env }}
  {{ $k }}: {{ $v | quote }}
  {{- end }}
  {{- end }}
{{- end -}}
