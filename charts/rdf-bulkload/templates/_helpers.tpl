{{/* Chart name. */}}
{{- define "rdf-bulkload.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Full name: release-chart, or the override. */}}
{{- define "rdf-bulkload.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{- define "rdf-bulkload.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
app.kubernetes.io/name: {{ include "rdf-bulkload.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: rdf-bulkload
{{- end }}

{{- define "rdf-bulkload.selectorLabels" -}}
app.kubernetes.io/name: {{ include "rdf-bulkload.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: controller-manager
{{- end }}

{{- define "rdf-bulkload.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (printf "%s-controller-manager" (include "rdf-bulkload.fullname" .)) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{/* image reference: repository@digest, else repository:tag (tag defaults to appVersion). Args: dict img root */}}
{{- define "rdf-bulkload.image" -}}
{{- if .img.digest -}}
{{ .img.repository }}@{{ .img.digest }}
{{- else -}}
{{ .img.repository }}:{{ default .root.Chart.AppVersion .img.tag }}
{{- end -}}
{{- end }}

{{- define "rdf-bulkload.operatorImage" -}}
{{ include "rdf-bulkload.image" (dict "img" .Values.image "root" .) }}
{{- end }}

{{- define "rdf-bulkload.loaderImage" -}}
{{ include "rdf-bulkload.image" (dict "img" .Values.loaderImage "root" .) }}
{{- end }}

{{- define "rdf-bulkload.fusekiImage" -}}
{{- if .Values.fuseki.image.repository -}}
{{ include "rdf-bulkload.image" (dict "img" .Values.fuseki.image "root" .) }}
{{- else -}}
{{ include "rdf-bulkload.loaderImage" . }}
{{- end -}}
{{- end }}
