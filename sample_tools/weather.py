"""get_weather: the seed article's weather scenario (杭州 26 °C, 小雨)."""

from __future__ import annotations

from agentdbg.tool_api import ToolError

WEATHER = {
    "杭州": {"temperature": 26, "condition": "小雨", "wind": "东北风 2级"},
    "北京": {"temperature": 24, "condition": "晴", "wind": "北风 3级"},
    "上海": {"temperature": 29, "condition": "多云", "wind": "东南风 2级"},
    "广州": {"temperature": 31, "condition": "雷阵雨", "wind": "南风 1级"},
    "成都": {"temperature": 22, "condition": "阴", "wind": "微风"},
    "London": {"temperature": 14, "condition": "drizzle", "wind": "SW 3"},
    "Paris": {"temperature": 17, "condition": "cloudy", "wind": "W 2"},
    "New York": {"temperature": 19, "condition": "sunny", "wind": "NW 2"},
}


def get_weather(city: str) -> dict:
    data = WEATHER.get(city)
    if data is None:
        raise ToolError("not_found", f"no weather data for city {city}")
    return {"city": city, **data, "unit": "°C"}
