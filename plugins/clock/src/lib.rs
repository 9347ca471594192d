//! `clock`: calendar date arithmetic and the current time for Warden.
//!
//! Dates are proleptic Gregorian, written `YYYY-MM-DD` (years 0000–9999). Every tool but
//! `now` is deterministic; `now` reads the sandbox's wall clock. No capabilities needed.

mod dates;

use dates::{Answer, DATE_PATTERN};
use schemars::JsonSchema;
use serde::Deserialize;
use warden_plugin::{Error, Structured, tool};

const AMOUNT_LIMIT: i64 = 1_000_000;

/// A bad date or offset is a message for the model saying how to fix the arguments.
fn answer<T>(outcome: Result<Answer<T>, String>) -> Result<Structured<T>, Error> {
    let answer = outcome.map_err(Error::InvalidArguments)?;
    Ok(Structured::new(answer.text, answer.structured))
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct DateAddArgs {
    /// The starting date, YYYY-MM-DD.
    #[schemars(regex(pattern = DATE_PATTERN))]
    date: String,
    /// Years to add; negative subtracts.
    #[schemars(range(min = -AMOUNT_LIMIT, max = AMOUNT_LIMIT))]
    years: Option<i64>,
    /// Months to add; negative subtracts.
    #[schemars(range(min = -AMOUNT_LIMIT, max = AMOUNT_LIMIT))]
    months: Option<i64>,
    /// Weeks to add; negative subtracts.
    #[schemars(range(min = -AMOUNT_LIMIT, max = AMOUNT_LIMIT))]
    weeks: Option<i64>,
    /// Days to add; negative subtracts.
    #[schemars(range(min = -AMOUNT_LIMIT, max = AMOUNT_LIMIT))]
    days: Option<i64>,
}

/// Adds (or, with negative numbers, subtracts) years, months, weeks and days to a calendar
/// date. Years and months are applied first and clamp to the end of a shorter month
/// (2024-01-31 plus 1 month is 2024-02-29), then weeks and days. Returns the new date and
/// its weekday.
#[tool(
    title = "Add to a date",
    read_only,
    destructive = false,
    idempotent,
    open_world = false
)]
fn date_add(args: DateAddArgs) -> Result<Structured<dates::Added>, Error> {
    answer(dates::date_add(
        &args.date,
        args.years.unwrap_or(0),
        args.months.unwrap_or(0),
        args.weeks.unwrap_or(0),
        args.days.unwrap_or(0),
    ))
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct DateDiffArgs {
    /// The first date, YYYY-MM-DD.
    #[schemars(regex(pattern = DATE_PATTERN))]
    start: String,
    /// The second date, YYYY-MM-DD.
    #[schemars(regex(pattern = DATE_PATTERN))]
    end: String,
}

/// Counts the days from `start` to `end` (both YYYY-MM-DD). The result is negative when
/// `end` is before `start`; the start day is not counted, so from 2024-01-01 to 2024-01-02
/// is 1 day.
#[tool(
    title = "Days between dates",
    read_only,
    destructive = false,
    idempotent,
    open_world = false
)]
fn date_diff(args: DateDiffArgs) -> Result<Structured<dates::Difference>, Error> {
    answer(dates::date_diff(&args.start, &args.end))
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct WeekdayArgs {
    /// The date, YYYY-MM-DD.
    #[schemars(regex(pattern = DATE_PATTERN))]
    date: String,
}

/// Tells which day of the week a date (YYYY-MM-DD) falls on, with its ISO 8601 week (weeks
/// start on Monday; week 1 holds the year's first Thursday) and its day of the year.
#[tool(
    title = "Day of the week",
    read_only,
    destructive = false,
    idempotent,
    open_world = false
)]
fn weekday(args: WeekdayArgs) -> Result<Structured<dates::DayOfWeek>, Error> {
    answer(dates::weekday(&args.date))
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct NowArgs {
    /// Offset from UTC: "Z" (the default), "+02:00", "-0530" or "+09".
    #[schemars(regex(pattern = "^(Z|UTC|[+-][0-9]{2}(:?[0-9]{2})?)$"), extend("default" = "Z"))]
    utc_offset: Option<String>,
}

/// Returns the current date and time, to the second, at UTC or at a fixed UTC offset such
/// as "+02:00" or "-05:30". There is no time-zone database: to get a zone's local time (e.g.
/// Europe/Paris), pass that zone's current offset.
#[tool(
    title = "Current time",
    read_only,
    destructive = false,
    idempotent,
    open_world = false
)]
fn now(args: NowArgs) -> Result<Structured<dates::Now>, Error> {
    answer(dates::now(
        args.utc_offset.as_deref().unwrap_or("Z"),
        chrono::Utc::now(),
    ))
}

warden_plugin::export! { tools: [date_add, date_diff, weekday, now] }
