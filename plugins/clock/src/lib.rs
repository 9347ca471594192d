//! `clock`: calendar date arithmetic and the current time for Warden.
//!
//! Dates are proleptic Gregorian, written `YYYY-MM-DD` (years 0000–9999). Every tool but
//! `now` is deterministic; `now` reads the sandbox's wall clock. No capabilities needed.

mod dates;

wit_bindgen::generate!({
    path: "../../wit",
    world: "warden:plugin/tool-plugin",
});

use exports::warden::plugin::tools::Guest;
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use warden::plugin::types::{CallResult, Content, Error, Tool, ToolAnnotations};

struct Clock;

const DATE_PATTERN: &str = "^[0-9]{4}-[0-9]{2}-[0-9]{2}$";
const AMOUNT_LIMIT: i64 = 1_000_000;

fn date_property(description: &str) -> Value {
    json!({ "type": "string", "pattern": DATE_PATTERN, "description": description })
}

fn amount_property(description: &str) -> Value {
    json!({
        "type": "integer",
        "minimum": -AMOUNT_LIMIT,
        "maximum": AMOUNT_LIMIT,
        "description": description
    })
}

fn weekday_property() -> Value {
    json!({ "type": "string", "enum": dates::WEEKDAYS })
}

impl Guest for Clock {
    fn list_tools() -> Vec<Tool> {
        vec![
            tool(
                "date_add",
                "Add to a date",
                "Adds (or, with negative numbers, subtracts) years, months, weeks and days to \
                 a calendar date. Years and months are applied first and clamp to the end of \
                 a shorter month (2024-01-31 plus 1 month is 2024-02-29), then weeks and days. \
                 Returns the new date and its weekday.",
                json!({
                    "type": "object",
                    "properties": {
                        "date": date_property("The starting date, YYYY-MM-DD."),
                        "years": amount_property("Years to add; negative subtracts."),
                        "months": amount_property("Months to add; negative subtracts."),
                        "weeks": amount_property("Weeks to add; negative subtracts."),
                        "days": amount_property("Days to add; negative subtracts.")
                    },
                    "required": ["date"],
                    "additionalProperties": false
                }),
                Some(json!({
                    "type": "object",
                    "properties": {
                        "date": { "type": "string", "pattern": DATE_PATTERN },
                        "weekday": weekday_property()
                    },
                    "required": ["date", "weekday"],
                    "additionalProperties": false
                })),
            ),
            tool(
                "date_diff",
                "Days between dates",
                "Counts the days from `start` to `end` (both YYYY-MM-DD). The result is \
                 negative when `end` is before `start`; the start day is not counted, so \
                 from 2024-01-01 to 2024-01-02 is 1 day.",
                json!({
                    "type": "object",
                    "properties": {
                        "start": date_property("The first date, YYYY-MM-DD."),
                        "end": date_property("The second date, YYYY-MM-DD.")
                    },
                    "required": ["start", "end"],
                    "additionalProperties": false
                }),
                Some(json!({
                    "type": "object",
                    "properties": {
                        "start": { "type": "string", "pattern": DATE_PATTERN },
                        "end": { "type": "string", "pattern": DATE_PATTERN },
                        "days": { "type": "integer", "description": "end minus start, in days" }
                    },
                    "required": ["start", "end", "days"],
                    "additionalProperties": false
                })),
            ),
            tool(
                "weekday",
                "Day of the week",
                "Tells which day of the week a date (YYYY-MM-DD) falls on, with its ISO 8601 \
                 week (weeks start on Monday; week 1 holds the year's first Thursday) and \
                 its day of the year.",
                json!({
                    "type": "object",
                    "properties": {
                        "date": date_property("The date, YYYY-MM-DD.")
                    },
                    "required": ["date"],
                    "additionalProperties": false
                }),
                Some(json!({
                    "type": "object",
                    "properties": {
                        "date": { "type": "string", "pattern": DATE_PATTERN },
                        "weekday": weekday_property(),
                        "iso_weekday": { "type": "integer", "minimum": 1, "maximum": 7, "description": "Monday is 1, Sunday is 7" },
                        "iso_year": { "type": "integer", "description": "the year the ISO week belongs to" },
                        "iso_week": { "type": "integer", "minimum": 1, "maximum": 53 },
                        "day_of_year": { "type": "integer", "minimum": 1, "maximum": 366 }
                    },
                    "required": ["date", "weekday", "iso_weekday", "iso_year", "iso_week", "day_of_year"],
                    "additionalProperties": false
                })),
            ),
            tool(
                "now",
                "Current time",
                "Returns the current date and time, to the second, at UTC or at a fixed UTC \
                 offset such as \"+02:00\" or \"-05:30\". There is no time-zone database: to \
                 get a zone's local time (e.g. Europe/Paris), pass that zone's current \
                 offset.",
                json!({
                    "type": "object",
                    "properties": {
                        "utc_offset": {
                            "type": "string",
                            "pattern": "^(Z|UTC|[+-][0-9]{2}(:?[0-9]{2})?)$",
                            "default": "Z",
                            "description": "Offset from UTC: \"Z\" (the default), \"+02:00\", \"-0530\" or \"+09\"."
                        }
                    },
                    "required": [],
                    "additionalProperties": false
                }),
                Some(json!({
                    "type": "object",
                    "properties": {
                        "datetime": { "type": "string", "description": "RFC 3339, e.g. 2025-06-01T14:03:05+02:00" },
                        "date": { "type": "string", "pattern": DATE_PATTERN },
                        "time": { "type": "string", "pattern": "^[0-9]{2}:[0-9]{2}:[0-9]{2}$" },
                        "weekday": weekday_property(),
                        "utc_offset": { "type": "string", "pattern": "^[+-][0-9]{2}:[0-9]{2}$" },
                        "unix_seconds": { "type": "integer" }
                    },
                    "required": ["datetime", "date", "time", "weekday", "utc_offset", "unix_seconds"],
                    "additionalProperties": false
                })),
            ),
        ]
    }

    fn call_tool(name: String, arguments: String) -> Result<CallResult, Error> {
        let outcome = match name.as_str() {
            "date_add" => {
                let args: DateAddArgs = parse(&arguments)?;
                dates::date_add(
                    &args.date,
                    args.years.unwrap_or(0),
                    args.months.unwrap_or(0),
                    args.weeks.unwrap_or(0),
                    args.days.unwrap_or(0),
                )
            }
            "date_diff" => {
                let args: DateDiffArgs = parse(&arguments)?;
                dates::date_diff(&args.start, &args.end)
            }
            "weekday" => {
                let args: WeekdayArgs = parse(&arguments)?;
                dates::weekday(&args.date)
            }
            "now" => {
                let args: NowArgs = parse(&arguments)?;
                dates::now(args.utc_offset.as_deref().unwrap_or("Z"), chrono::Utc::now())
            }
            _ => {
                return Err(Error::NotFound(format!("the clock plugin has no tool named {name:?}")));
            }
        };
        let answer = outcome.map_err(Error::InvalidArguments)?;
        Ok(CallResult {
            content: vec![Content::Text(answer.text)],
            structured_content: Some(answer.structured.to_string()),
            is_error: false,
        })
    }
}

export!(Clock);

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct DateAddArgs {
    date: String,
    years: Option<i64>,
    months: Option<i64>,
    weeks: Option<i64>,
    days: Option<i64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct DateDiffArgs {
    start: String,
    end: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct WeekdayArgs {
    date: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct NowArgs {
    utc_offset: Option<String>,
}

/// The host checks arguments against the input schema before calling; this is the backstop.
fn parse<T: DeserializeOwned>(arguments: &str) -> Result<T, Error> {
    serde_json::from_str(arguments)
        .map_err(|e| Error::InvalidArguments(format!("the arguments do not match the tool's input schema: {e}")))
}

fn tool(name: &str, title: &str, description: &str, input: Value, output: Option<Value>) -> Tool {
    Tool {
        name: name.to_string(),
        title: Some(title.to_string()),
        description: description.to_string(),
        input_schema: input.to_string(),
        output_schema: output.map(|schema| schema.to_string()),
        annotations: Some(ToolAnnotations {
            title: Some(title.to_string()),
            read_only_hint: Some(true),
            destructive_hint: Some(false),
            idempotent_hint: Some(true),
            open_world_hint: Some(false),
        }),
    }
}
