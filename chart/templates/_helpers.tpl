{{/* Names, labels and the effective controller configuration, shared by every template. */}}

{{- define "hti.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "hti.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* The HAProxy objects' name; shortened so StatefulSet pod names (name-N) stay valid labels. */}}
{{- define "hti.haproxyName" -}}
{{- printf "%s-haproxy" (include "hti.fullname" . | trunc 50 | trimSuffix "-") -}}
{{- end -}}

{{- define "hti.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: {{ include "hti.name" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
{{- end -}}

{{- define "hti.controllerSelectorLabels" -}}
app.kubernetes.io/name: {{ include "hti.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: controller
{{- end -}}

{{- define "hti.controllerLabels" -}}
{{ include "hti.labels" . }}
{{ include "hti.controllerSelectorLabels" . }}
{{- end -}}

{{/*
The HAProxy selector leaves out app.kubernetes.io/name: the pods carry the configuration's podSelector
labels, whose shipped value is app.kubernetes.io/name: haproxy.
*/}}
{{- define "hti.haproxySelectorLabels" -}}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: haproxy
{{- end -}}

{{- define "hti.haproxyLabels" -}}
{{ include "hti.labels" . }}
{{ include "hti.haproxySelectorLabels" . }}
{{- end -}}

{{/* HAProxy pod labels: the selector labels and the configuration's podSelector, which must not contradict them. */}}
{{- define "hti.haproxyPodLabels" -}}
{{- $selector := include "hti.haproxySelectorLabels" . | fromYaml -}}
{{- $podSelector := dig "podSelector" "matchLabels" dict (include "hti.config" . | fromYaml) -}}
{{- range $key, $value := $podSelector -}}
{{- if and (hasKey $selector $key) (ne (toString (index $selector $key)) (toString $value)) -}}
{{- fail (printf "controller configuration podSelector.matchLabels.%s is %q but the chart's HAProxy pods need %q there: choose another label" $key (toString $value) (index $selector $key)) -}}
{{- end -}}
{{- end -}}
{{- toYaml (merge (dict) $selector $podSelector .Values.haproxy.podLabels) -}}
{{- end -}}

{{- define "hti.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "hti.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{- define "hti.credentialsSecretName" -}}
{{- default .Values.credentials.secretName .Values.credentials.existingSecret -}}
{{- end -}}

{{- define "hti.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) -}}
{{- end -}}

{{- define "hti.haproxyImage" -}}
{{- printf "%s:%s" .Values.haproxy.image.repository .Values.haproxy.image.tag -}}
{{- end -}}

{{- define "hti.dataplaneImage" -}}
{{- $image := .Values.haproxy.dataplane.image -}}
{{- if $image.repository -}}
{{- printf "%s:%s" $image.repository (required "haproxy.dataplane.image.tag is required with haproxy.dataplane.image.repository" $image.tag) -}}
{{- else -}}
{{- include "hti.haproxyImage" . -}}
{{- end -}}
{{- end -}}

{{/*
The controller configuration as deployed (YAML text): controller.config.replace or the shipped
files/config.yaml, with controller.config.extend merged over it, dataplane.scheme https when TLS
to the Data Plane API is on, and gatewayApi.httpPort/httpsPort from haproxy.service.ports where those
are not 80 and 443 and the configuration sets no port of its own (Gateway listener ports are the ports
clients reach HAProxy on). Without anything to merge the text is kept as written, comments included.
*/}}
{{- define "hti.config" -}}
{{- $text := printf "%s\n" (.Values.controller.config.replace | default (.Files.Get "files/config.yaml") | trimSuffix "\n") -}}
{{- $extend := deepCopy .Values.controller.config.extend -}}
{{- if .Values.dataplane.tls.enabled -}}
{{- $extend = mergeOverwrite $extend (dict "dataplane" (dict "scheme" "https")) -}}
{{- end -}}
{{- $parsed := fromYaml $text -}}
{{- if hasKey $parsed "Error" -}}
{{- fail (printf "controller.config.replace is not a YAML mapping: %s" $parsed.Error) -}}
{{- end -}}
{{- $servicePorts := dict "httpPort" (int .Values.haproxy.service.ports.http) "httpsPort" (int .Values.haproxy.service.ports.https) -}}
{{- $defaultPorts := dict "httpPort" 80 "httpsPort" 443 -}}
{{- $asked := mergeOverwrite (dict) (get $parsed "gatewayApi" | default dict) (get $extend "gatewayApi" | default dict) -}}
{{- $gatewayPorts := dict -}}
{{- range $key, $port := $servicePorts -}}
{{- if and (ne $port (get $defaultPorts $key)) (not (hasKey $asked $key)) -}}
{{- $_ := set $gatewayPorts $key $port -}}
{{- end -}}
{{- end -}}
{{- if $gatewayPorts -}}
{{- $extend = mergeOverwrite $extend (dict "gatewayApi" $gatewayPorts) -}}
{{- end -}}
{{- if eq (include "hti.http3" .) "true" -}}
{{- $http3 := dict "http3" true "http3AdvertisedPort" (int .Values.haproxy.service.ports.quic) -}}
{{- $extend = mergeOverwrite (dict "templateValues" $http3) $extend -}}
{{- end -}}
{{- if $extend -}}
{{- toYaml (mergeOverwrite $parsed $extend) -}}
{{- else -}}
{{- $text -}}
{{- end -}}
{{- end -}}

{{/*
"true" when the HAProxy pods serve HTTP/3: haproxy.http3 true, or auto with an image tag of 3.2 or later
(the fleet's HAProxy decides, not the controller's: the controller image validates with the same version).
*/}}
{{- define "hti.http3" -}}
{{- $asked := .Values.haproxy.http3 -}}
{{- if eq (toString $asked) "auto" -}}
{{- $version := regexFind "^[0-9]+[.][0-9]+" (toString .Values.haproxy.image.tag) | splitList "." -}}
{{- if eq (len $version) 2 -}}
{{- $major := atoi (index $version 0) -}}
{{- toString (or (gt $major 3) (and (eq $major 3) (ge (atoi (index $version 1)) 2))) -}}
{{- else -}}
false
{{- end -}}
{{- else -}}
{{- toString $asked -}}
{{- end -}}
{{- end -}}

{{/* The configuration's settings the chart lays the HAProxy pods out by (a dict). */}}
{{- define "hti.layout" -}}
{{- $config := include "hti.config" . | fromYaml -}}
{{- $dataplane := $config.dataplane | default dict -}}
{{- $values := $config.templateValues | default dict -}}
{{- $base := $dataplane.baseDir | default "/etc/haproxy" -}}
{{- $socket := $values.runtimeSocket | default "/var/run/haproxy/admin.sock" -}}
{{- $layout := dict "baseDir" $base "configFile" ($dataplane.configFile | default (printf "%s/haproxy.cfg" $base)) -}}
{{- range $key, $default := dict "mapsDir" "maps" "certificatesDir" "ssl" "generalDir" "general" -}}
{{- $dir := index $dataplane $key | default $default -}}
{{- $_ := set $layout $key (ternary $dir (printf "%s/%s" $base $dir) (isAbs $dir)) -}}
{{- end -}}
{{- $_ := set $layout "scheme" ($dataplane.scheme | default "http") -}}
{{- $_ := set $layout "dataplanePort" (int ($dataplane.port | default 5555)) -}}
{{- $_ := set $layout "runtimeSocket" $socket -}}
{{- $_ := set $layout "runtimeDir" (dir $socket) -}}
{{- $_ := set $layout "bindAddress" ($values.bindAddress | default "*") -}}
{{- $_ := set $layout "masterSocket" (printf "%s/master.sock" (dir $socket)) -}}
{{- $_ := set $layout "httpPort" (int ($values.httpPort | default 80)) -}}
{{- $_ := set $layout "httpsPort" (int ($values.httpsPort | default 443)) -}}
{{- $_ := set $layout "statusPort" (int ($values.statusPort | default 8404)) -}}
{{- $_ := set $layout "peerPort" (int ($values.peerPort | default 10000)) -}}
{{- if and (eq $layout.scheme "https") (not .Values.dataplane.tls.enabled) -}}
{{- fail "the controller configuration says dataplane.scheme: https but dataplane.tls.enabled is false: the Data Plane API would serve plain HTTP" -}}
{{- end -}}
{{- toYaml $layout -}}
{{- end -}}

{{/* The plural resource name of a kind, as lib/kube/plural.ts derives it for the controller. */}}
{{- define "hti.plural" -}}
{{- $lower := lower . -}}
{{- if eq $lower "endpoints" -}}
{{- $lower -}}
{{- else if regexMatch "[^aeiou]y$" $lower -}}
{{- printf "%sies" (trimSuffix "y" $lower) -}}
{{- else if regexMatch "(s|x|z|ch|sh)$" $lower -}}
{{- printf "%ses" $lower -}}
{{- else -}}
{{- printf "%ss" $lower -}}
{{- end -}}
{{- end -}}

{{/*
Read access for the configuration's watchedResources (a dict): "cluster" rules for resources watched in
every namespace, "namespaces" rules by namespace for the others; Ingress status updates go wherever
Ingresses are watched.
*/}}
{{- define "hti.watchRules" -}}
{{- $config := include "hti.config" . | fromYaml -}}
{{- $cluster := list -}}
{{- $namespaces := dict -}}
{{- range $name, $watched := $config.watchedResources | default dict -}}
{{- $apiVersion := required (printf "controller configuration watchedResources.%s.apiVersion is required" $name) $watched.apiVersion -}}
{{- $group := ternary (first (splitList "/" $apiVersion)) "" (contains "/" $apiVersion) -}}
{{- $resource := $watched.resource | default (include "hti.plural" (required (printf "controller configuration watchedResources.%s needs kind or resource" $name) $watched.kind)) -}}
{{- $rules := list (dict "apiGroups" (list $group) "resources" (list $resource) "verbs" (list "get" "list" "watch")) -}}
{{- if and (eq $group "networking.k8s.io") (eq $resource "ingresses") -}}
{{- $rules = append $rules (dict "apiGroups" (list $group) "resources" (list "ingresses/status") "verbs" (list "patch")) -}}
{{- end -}}
{{- if and (eq $group "gateway.networking.k8s.io") (has $resource (list "gatewayclasses" "gateways" "listenersets" "httproutes" "grpcroutes" "tlsroutes" "tcproutes" "backendtlspolicies")) -}}
{{- $rules = append $rules (dict "apiGroups" (list $group) "resources" (list (printf "%s/status" $resource)) "verbs" (list "patch")) -}}
{{- end -}}
{{- if $watched.namespace -}}
{{- $_ := set $namespaces $watched.namespace (concat (get $namespaces $watched.namespace | default list) $rules) -}}
{{- else -}}
{{- $cluster = concat $cluster $rules -}}
{{- end -}}
{{- end -}}
{{- toYaml (dict "cluster" $cluster "namespaces" $namespaces) -}}
{{- end -}}

{{/*
Where the admission webhook's certificate comes from: webhook.certificate.source, with auto meaning
cert-manager when its API is installed and a certificate the controller generates otherwise.
*/}}
{{- define "hti.webhookCertificateSource" -}}
{{- $source := .Values.webhook.certificate.source -}}
{{- if eq $source "auto" -}}
{{- ternary "cert-manager" "generated" (.Capabilities.APIVersions.Has "cert-manager.io/v1") -}}
{{- else -}}
{{- $source -}}
{{- end -}}
{{- end -}}

{{/* The Secret holding the webhook's serving certificate (tls.crt, tls.key, ca.crt). */}}
{{- define "hti.webhookSecretName" -}}
{{- if eq (include "hti.webhookCertificateSource" .) "secret" -}}
{{- required "webhook.certificate.secretName is required with webhook.certificate.source secret" .Values.webhook.certificate.secretName -}}
{{- else -}}
{{- printf "%s-webhook-tls" (include "hti.fullname" .) -}}
{{- end -}}
{{- end -}}

{{/* Whether the controller keeps the ValidatingWebhookConfiguration's caBundle (cert-manager's CA injector does otherwise). */}}
{{- define "hti.webhookPatchesCaBundle" -}}
{{- if and .Values.webhook.enabled (ne (include "hti.webhookCertificateSource" .) "cert-manager") -}}true{{- end -}}
{{- end -}}

{{/*
One webhook per watched resource the configuration marks with validationWebhook (a list of dicts):
its rule, and match conditions so that the API server calls it only for what the controller judges:
Ingresses of the configuration's class, objects meeting the resource's field selector (plain field
paths only; the controller checks the rest itself).
*/}}
{{- define "hti.webhooks" -}}
{{- $config := include "hti.config" . | fromYaml -}}
{{- $className := dig "ingress" "className" "haproxy" $config -}}
{{- $hooks := list -}}
{{- range $name, $watched := $config.watchedResources | default dict -}}
{{- if $watched.validationWebhook -}}
{{- $apiVersion := $watched.apiVersion -}}
{{- $group := ternary (first (splitList "/" $apiVersion)) "" (contains "/" $apiVersion) -}}
{{- $version := last (splitList "/" $apiVersion) -}}
{{- $resource := $watched.resource | default (include "hti.plural" $watched.kind) -}}
{{- $conditions := list -}}
{{- if and (eq $group "networking.k8s.io") (eq $resource "ingresses") -}}
{{- $expression := printf "has(object.spec.ingressClassName) ? object.spec.ingressClassName == '%s' : (has(object.metadata.annotations) && 'kubernetes.io/ingress.class' in object.metadata.annotations && object.metadata.annotations['kubernetes.io/ingress.class'] == '%s')" $className $className -}}
{{- $conditions = append $conditions (dict "name" "ingress-class" "expression" $expression) -}}
{{- end -}}
{{- range $i, $requirement := splitList "," ($watched.fieldSelector | default "") -}}
{{- $requirement = trim $requirement -}}
{{- if regexMatch "^[A-Za-z][A-Za-z0-9]*(\\.[A-Za-z][A-Za-z0-9]*)*\\s*!?==?\\s*[^'\\\\]*$" $requirement -}}
{{- $negated := contains "!=" $requirement -}}
{{- $parts := regexSplit "\\s*!?==?\\s*" $requirement 2 -}}
{{- $path := index $parts 0 -}}
{{- $segments := splitList "." $path -}}
{{- $present := list -}}
{{- range $j, $segment := $segments -}}
{{- $present = append $present (printf "has(object.%s)" (join "." (slice $segments 0 (add1 $j)))) -}}
{{- end -}}
{{- $equal := printf "%s && object.%s == '%s'" (join " && " $present) $path (index $parts 1) -}}
{{- $conditions = append $conditions (dict "name" (printf "field-selector-%d" $i) "expression" (ternary (printf "!(%s)" $equal) $equal $negated)) -}}
{{- end -}}
{{- end -}}
{{- $hook := dict "name" (printf "%s.%s.webhook.haproxy-template-ic.io" $resource (ternary "core" $group (eq $group ""))) "group" $group "version" $version "resource" $resource "conditions" $conditions -}}
{{- if $watched.namespace -}}
{{- $_ := set $hook "namespace" $watched.namespace -}}
{{- end -}}
{{- $hooks = append $hooks $hook -}}
{{- end -}}
{{- end -}}
{{- toYaml (dict "hooks" $hooks) -}}
{{- end -}}
