"""A tool loop on the official openai client, instrumented the way each project's docs say,
exporting its spans over OTLP/HTTP protobuf (OTEL_EXPORTER_OTLP_ENDPOINT).

    python instrumented_app.py openinference|openllmetry [--drop-result]

The model (OPENAI_BASE_URL) asks for get_weather; the app runs it and sends the result back
(with --drop-result it sends the model's call without its result: the bug to be found).
"""

import json
import os
import sys

from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor

kind = sys.argv[1]
drop = "--drop-result" in sys.argv
provider = TracerProvider(resource=Resource.create({"service.name": f"weather-{kind}"}))
provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))   # endpoint from the environment
trace.set_tracer_provider(provider)

if kind == "openinference":          # as Phoenix's docs instrument an app
    from openinference.instrumentation.openai import OpenAIInstrumentor
    OpenAIInstrumentor().instrument(tracer_provider=provider)
else:                                # OpenLLMetry, content tracing on (TRACELOOP_TRACE_CONTENT)
    os.environ.setdefault("TRACELOOP_TRACE_CONTENT", "true")
    from opentelemetry.instrumentation.openai import OpenAIInstrumentor
    OpenAIInstrumentor().instrument(tracer_provider=provider)

from openai import OpenAI  # noqa: E402

TOOLS = [{"type": "function", "function": {
    "name": "get_weather", "description": "Current weather for a city.",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}},
                   "required": ["city"]}}}]

client = OpenAI()
messages = [{"role": "user", "content": "What's the weather in Paris?"}]
for _ in range(4):
    reply = client.chat.completions.create(model="gpt-4o-mini", messages=messages, tools=TOOLS)
    message = reply.choices[0].message
    messages.append(message.model_dump(exclude_none=True))
    if not message.tool_calls:
        print(message.content)
        break
    for call in message.tool_calls:
        if not drop:
            city = json.loads(call.function.arguments).get("city")
            messages.append({"role": "tool", "tool_call_id": call.id,
                             "content": json.dumps({"city": city, "temp_c": 18})})
provider.shutdown()
