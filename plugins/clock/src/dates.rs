//! The date arithmetic behind the tools, free of any wasm or WIT types.

use chrono::{DateTime, Datelike, FixedOffset, Months, NaiveDate, TimeDelta, Utc, Weekday};
use schemars::JsonSchema;
use serde::Serialize;

/// `YYYY-MM-DD`, the shape of every date in and out.
pub const DATE_PATTERN: &str = "^[0-9]{4}-[0-9]{2}-[0-9]{2}$";

pub const WEEKDAYS: [&str; 7] = [
    "Monday",
    "Tuesday",
    "Wednesday",
    "Thursday",
    "Friday",
    "Saturday",
    "Sunday",
];

const MONTHS: [&str; 12] = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
];

/// What a tool returns: a sentence for people and a value whose type is the output schema.
#[derive(Debug)]
pub struct Answer<T> {
    pub text: String,
    pub structured: T,
}

/// Errors are messages for the model, saying how to fix the arguments.
pub type Outcome<T> = Result<Answer<T>, String>;

/// `date_add`'s answer.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Added {
    #[schemars(regex(pattern = DATE_PATTERN))]
    pub date: String,
    #[schemars(extend("enum" = WEEKDAYS))]
    pub weekday: &'static str,
}

/// `date_diff`'s answer.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Difference {
    #[schemars(regex(pattern = DATE_PATTERN))]
    pub start: String,
    #[schemars(regex(pattern = DATE_PATTERN))]
    pub end: String,
    /// end minus start, in days
    pub days: i64,
}

/// `weekday`'s answer.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DayOfWeek {
    #[schemars(regex(pattern = DATE_PATTERN))]
    pub date: String,
    #[schemars(extend("enum" = WEEKDAYS))]
    pub weekday: &'static str,
    /// Monday is 1, Sunday is 7
    #[schemars(range(min = 1, max = 7))]
    pub iso_weekday: u32,
    /// the year the ISO week belongs to
    pub iso_year: i32,
    #[schemars(range(min = 1, max = 53))]
    pub iso_week: u32,
    #[schemars(range(min = 1, max = 366))]
    pub day_of_year: u32,
}

/// `now`'s answer.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Now {
    /// RFC 3339, e.g. 2025-06-01T14:03:05+02:00
    pub datetime: String,
    #[schemars(regex(pattern = DATE_PATTERN))]
    pub date: String,
    #[schemars(regex(pattern = "^[0-9]{2}:[0-9]{2}:[0-9]{2}$"))]
    pub time: String,
    #[schemars(extend("enum" = WEEKDAYS))]
    pub weekday: &'static str,
    #[schemars(regex(pattern = "^[+-][0-9]{2}:[0-9]{2}$"))]
    pub utc_offset: String,
    pub unix_seconds: i64,
}

fn weekday_name(day: Weekday) -> &'static str {
    WEEKDAYS[day.num_days_from_monday() as usize]
}

fn format_date(date: NaiveDate) -> String {
    format!("{:04}-{:02}-{:02}", date.year(), date.month(), date.day())
}

fn days_in_month(year: i32, month: u32) -> u32 {
    let first = NaiveDate::from_ymd_opt(year, month, 1).expect("valid month");
    let next = first.checked_add_months(Months::new(1)).expect("in range");
    (next - first).num_days() as u32
}

/// Parses `YYYY-MM-DD` strictly; `field` names the argument in error messages.
pub fn parse_date(field: &str, text: &str) -> Result<NaiveDate, String> {
    let bytes = text.as_bytes();
    let shaped = bytes.len() == 10
        && bytes[4] == b'-'
        && bytes[7] == b'-'
        && bytes
            .iter()
            .enumerate()
            .all(|(i, b)| i == 4 || i == 7 || b.is_ascii_digit());
    if !shaped {
        return Err(format!(
            "`{field}` must be a calendar date written YYYY-MM-DD, e.g. 2024-02-29; got {text:?}"
        ));
    }
    let year: i32 = text[0..4].parse().expect("digits");
    let month: u32 = text[5..7].parse().expect("digits");
    let day: u32 = text[8..10].parse().expect("digits");
    if !(1..=12).contains(&month) {
        return Err(format!(
            "`{field}` is {text:?}, but the month must be between 01 and 12 (YYYY-MM-DD)"
        ));
    }
    NaiveDate::from_ymd_opt(year, month, day).ok_or_else(|| {
        format!(
            "`{field}` is {text:?}, which is not a real date: {} {year} has {} days",
            MONTHS[month as usize - 1],
            days_in_month(year, month)
        )
    })
}

fn in_range(date: Option<NaiveDate>) -> Result<NaiveDate, String> {
    date.filter(|d| (0..=9999).contains(&d.year()))
        .ok_or_else(|| "the result would fall outside the years 0000 to 9999".to_string())
}

pub fn date_add(date: &str, years: i64, months: i64, weeks: i64, days: i64) -> Outcome<Added> {
    let start = parse_date("date", date)?;
    let total_months = years.checked_mul(12).and_then(|y| y.checked_add(months));
    let shifted = total_months.and_then(|total| {
        let months = Months::new(u32::try_from(total.unsigned_abs()).ok()?);
        if total >= 0 {
            start.checked_add_months(months)
        } else {
            start.checked_sub_months(months)
        }
    });
    let shifted = in_range(shifted)?;
    let total_days = weeks.checked_mul(7).and_then(|w| w.checked_add(days));
    let result = total_days
        .and_then(TimeDelta::try_days)
        .and_then(|delta| shifted.checked_add_signed(delta));
    let result = in_range(result)?;
    let (date, weekday) = (format_date(result), weekday_name(result.weekday()));
    Ok(Answer {
        text: format!("{date} ({weekday})"),
        structured: Added { date, weekday },
    })
}

pub fn date_diff(start: &str, end: &str) -> Outcome<Difference> {
    let (from, to) = (parse_date("start", start)?, parse_date("end", end)?);
    let days = (to - from).num_days();
    let unit = if days.abs() == 1 { "day" } else { "days" };
    Ok(Answer {
        text: format!("{days} {unit} from {start} to {end}"),
        structured: Difference {
            start: start.to_string(),
            end: end.to_string(),
            days,
        },
    })
}

pub fn weekday(date: &str) -> Outcome<DayOfWeek> {
    let day = parse_date("date", date)?;
    let name = weekday_name(day.weekday());
    let week = day.iso_week();
    Ok(Answer {
        text: format!(
            "{date} is a {name} (ISO week {:04}-W{:02}, day {} of {:04}).",
            week.year(),
            week.week(),
            day.ordinal(),
            day.year()
        ),
        structured: DayOfWeek {
            date: date.to_string(),
            weekday: name,
            iso_weekday: day.weekday().number_from_monday(),
            iso_year: week.year(),
            iso_week: week.week(),
            day_of_year: day.ordinal(),
        },
    })
}

/// Accepts `Z`, `UTC`, `+HH:MM`, `+HHMM` and `+HH` (or `-`), up to 23:59 either way.
pub fn parse_offset(text: &str) -> Result<FixedOffset, String> {
    let wrong = || {
        format!(
            "`utc_offset` must be Z or a fixed offset like +02:00, -05:30 or +09 \
             (hours 00-23, minutes 00-59); got {text:?}. Time-zone names are not supported."
        )
    };
    if text == "Z" || text == "UTC" {
        return Ok(FixedOffset::east_opt(0).expect("zero offset"));
    }
    let sign = match text.as_bytes().first() {
        Some(b'+') => 1,
        Some(b'-') => -1,
        _ => return Err(wrong()),
    };
    let rest = &text[1..];
    let digits = rest.replacen(':', "", 1);
    let colon_ok = !rest.contains(':') || (rest.len() == 5 && rest.as_bytes()[2] == b':');
    if !colon_ok || !(digits.len() == 2 || digits.len() == 4) || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(wrong());
    }
    let hours: i32 = digits[0..2].parse().map_err(|_| wrong())?;
    let minutes: i32 = if digits.len() == 4 {
        digits[2..4].parse().map_err(|_| wrong())?
    } else {
        0
    };
    if hours > 23 || minutes > 59 {
        return Err(wrong());
    }
    FixedOffset::east_opt(sign * (hours * 3600 + minutes * 60)).ok_or_else(wrong)
}

fn format_offset(offset: FixedOffset) -> String {
    let seconds = offset.local_minus_utc();
    let sign = if seconds < 0 { '-' } else { '+' };
    let minutes = seconds.abs() / 60;
    format!("{sign}{:02}:{:02}", minutes / 60, minutes % 60)
}

/// `instant` is passed in so the formatting can be tested.
pub fn now(utc_offset: &str, instant: DateTime<Utc>) -> Outcome<Now> {
    let offset = parse_offset(utc_offset)?;
    let local = instant.with_timezone(&offset);
    let date = format_date(local.date_naive());
    let time = local.format("%H:%M:%S").to_string();
    let offset_text = format_offset(offset);
    let zone = if offset.local_minus_utc() == 0 {
        "Z".to_string()
    } else {
        offset_text.clone()
    };
    let datetime = format!("{date}T{time}{zone}");
    let weekday = weekday_name(local.weekday());
    Ok(Answer {
        text: format!("{datetime} ({weekday})"),
        structured: Now {
            datetime,
            date,
            time,
            weekday,
            utc_offset: offset_text,
            unix_seconds: instant.timestamp(),
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The JSON text of a structured answer, keys sorted.
    fn json<T: Serialize>(structured: &T) -> String {
        serde_json::to_value(structured).unwrap().to_string()
    }

    fn add(date: &str, y: i64, m: i64, w: i64, d: i64) -> String {
        date_add(date, y, m, w, d).unwrap().text
    }

    #[test]
    fn adding() {
        assert_eq!(add("2024-01-31", 0, 1, 0, 0), "2024-02-29 (Thursday)");
        assert_eq!(add("2023-01-31", 0, 1, 0, 0), "2023-02-28 (Tuesday)");
        assert_eq!(add("2024-02-29", 1, 0, 0, 0), "2025-02-28 (Friday)");
        assert_eq!(add("2024-03-31", 0, -1, 0, 0), "2024-02-29 (Thursday)");
        assert_eq!(add("2024-12-25", 0, 0, 0, 10), "2025-01-04 (Saturday)");
        assert_eq!(add("2024-01-01", 0, 0, 2, -1), "2024-01-14 (Sunday)");
        assert_eq!(add("2024-01-31", 0, 1, 0, 1), "2024-03-01 (Friday)");
        assert_eq!(add("2024-06-15", 0, 0, 0, 0), "2024-06-15 (Saturday)");
        let answer = date_add("2024-01-31", 0, 1, 0, 0).unwrap();
        assert_eq!(
            json(&answer.structured),
            r#"{"date":"2024-02-29","weekday":"Thursday"}"#
        );
    }

    #[test]
    fn adding_out_of_range() {
        let err = date_add("9999-12-31", 0, 0, 0, 1).unwrap_err();
        assert_eq!(err, "the result would fall outside the years 0000 to 9999");
        assert!(date_add("0000-01-01", 0, -1, 0, 0).is_err());
        assert!(date_add("2024-01-01", 1_000_000, 1_000_000, 1_000_000, 1_000_000).is_err());
        assert!(date_add("2024-01-01", i64::MAX, i64::MAX, i64::MIN, i64::MIN).is_err());
    }

    #[test]
    fn bad_dates() {
        assert_eq!(
            parse_date("date", "2023-02-29").unwrap_err(),
            "`date` is \"2023-02-29\", which is not a real date: February 2023 has 28 days"
        );
        assert_eq!(
            parse_date("start", "2024-13-01").unwrap_err(),
            "`start` is \"2024-13-01\", but the month must be between 01 and 12 (YYYY-MM-DD)"
        );
        assert_eq!(
            parse_date("date", "2024-2-5").unwrap_err(),
            "`date` must be a calendar date written YYYY-MM-DD, e.g. 2024-02-29; got \"2024-2-5\""
        );
        assert!(parse_date("date", "2024-04-31").is_err());
        assert!(parse_date("date", "２０２４-01-01").is_err());
        assert!(parse_date("date", "2024-00-10").is_err());
        assert!(parse_date("date", "2024-01-00").is_err());
        assert_eq!(parse_date("date", "0000-02-29").unwrap().year(), 0);
    }

    #[test]
    fn differences() {
        let diff = date_diff("2024-01-01", "2025-01-01").unwrap();
        assert_eq!(diff.text, "366 days from 2024-01-01 to 2025-01-01");
        assert_eq!(
            json(&diff.structured),
            r#"{"days":366,"end":"2025-01-01","start":"2024-01-01"}"#
        );
        assert_eq!(
            date_diff("2024-03-10", "2024-03-09").unwrap().text,
            "-1 day from 2024-03-10 to 2024-03-09"
        );
        assert_eq!(
            date_diff("2024-03-10", "2024-03-10").unwrap().text,
            "0 days from 2024-03-10 to 2024-03-10"
        );
        assert_eq!(
            date_diff("0000-01-01", "9999-12-31").unwrap().structured.days,
            3_652_424
        );
    }

    #[test]
    fn weekdays() {
        let leap = weekday("2024-02-29").unwrap();
        assert_eq!(
            leap.text,
            "2024-02-29 is a Thursday (ISO week 2024-W09, day 60 of 2024)."
        );
        assert_eq!(
            json(&leap.structured),
            r#"{"date":"2024-02-29","day_of_year":60,"iso_week":9,"iso_weekday":4,"iso_year":2024,"weekday":"Thursday"}"#
        );
        assert_eq!(
            weekday("2024-12-30").unwrap().text,
            "2024-12-30 is a Monday (ISO week 2025-W01, day 365 of 2024)."
        );
        assert_eq!(
            weekday("2021-01-03").unwrap().text,
            "2021-01-03 is a Sunday (ISO week 2020-W53, day 3 of 2021)."
        );
    }

    #[test]
    fn offsets() {
        assert_eq!(parse_offset("+02:00").unwrap().local_minus_utc(), 7200);
        assert_eq!(parse_offset("-0530").unwrap().local_minus_utc(), -19800);
        assert_eq!(parse_offset("+09").unwrap().local_minus_utc(), 32400);
        assert_eq!(parse_offset("UTC").unwrap().local_minus_utc(), 0);
        for bad in [
            "+24:00",
            "+02:60",
            "2:00",
            "+2",
            "+02:0",
            "+0:200",
            "Europe/Paris",
            "",
            "+02:00:00",
        ] {
            assert!(parse_offset(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn current_time() {
        let instant = DateTime::from_timestamp(1_717_245_785, 0).unwrap(); // 2024-06-01T12:43:05Z
        let utc = now("Z", instant).unwrap();
        assert_eq!(utc.text, "2024-06-01T12:43:05Z (Saturday)");
        assert_eq!(
            json(&utc.structured),
            r#"{"date":"2024-06-01","datetime":"2024-06-01T12:43:05Z","time":"12:43:05","unix_seconds":1717245785,"utc_offset":"+00:00","weekday":"Saturday"}"#
        );
        assert_eq!(
            now("-05:30", instant).unwrap().text,
            "2024-06-01T07:13:05-05:30 (Saturday)"
        );
        assert_eq!(now("+14", instant).unwrap().text, "2024-06-02T02:43:05+14:00 (Sunday)");
        assert!(now("CET", instant).is_err());
    }
}
