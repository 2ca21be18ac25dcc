//! Places (LASSI): topology parsing against sysfs trees of several machines, and place
//! descriptions good and bad.

use std::path::PathBuf;

use taskpools::places::{Level, PlaceId, Places, Topology};
use taskpools::{Error, Runtime};

fn fixture(name: &str) -> Topology {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/sysfs")
        .join(name);
    Topology::from_sysfs(&root).unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn groups(t: &Topology, l: Level) -> Vec<String> {
    t.groups(l)
        .iter()
        .map(|g| {
            g.iter()
                .map(|c| c.to_string())
                .collect::<Vec<_>>()
                .join(",")
        })
        .collect()
}

/// Two sockets of 8 cores with 2 hardware threads each, Linux numbering (siblings 16 apart),
/// one L3 and one NUMA node per socket.
#[test]
fn two_socket_numa_machine() {
    let t = fixture("xeon-2s-numa");
    assert_eq!(t.cpus().len(), 32);
    let sockets = groups(&t, Level::Packages);
    assert_eq!(
        sockets,
        [
            "0,1,2,3,4,5,6,7,16,17,18,19,20,21,22,23",
            "8,9,10,11,12,13,14,15,24,25,26,27,28,29,30,31"
        ]
    );
    assert_eq!(groups(&t, Level::NumaDomains), sockets);
    assert_eq!(groups(&t, Level::LlCaches), sockets);
    let cores = groups(&t, Level::Cores);
    assert_eq!(cores.len(), 16);
    assert_eq!(cores[0], "0,16");
    assert_eq!(cores[15], "15,31");
    assert_eq!(t.groups(Level::Threads).len(), 32);
    let p = Places::parse_on("numa_domains", &t).unwrap();
    assert_eq!((p.len(), p.workers()), (2, 32));
    assert_eq!(p.cores(1)[0], Some(8));
}

/// A laptop: one package of 4 cores with 2 threads each (siblings 4 apart), one L3, one node.
#[test]
fn single_socket_laptop() {
    let t = fixture("laptop-4c8t");
    assert_eq!(groups(&t, Level::Packages), ["0,1,2,3,4,5,6,7"]);
    assert_eq!(groups(&t, Level::LlCaches), ["0,1,2,3,4,5,6,7"]);
    assert_eq!(groups(&t, Level::Cores), ["0,4", "1,5", "2,6", "3,7"]);
    let p = Places::parse_on("cores", &t).unwrap();
    assert_eq!((p.len(), p.workers()), (4, 8));
    assert_eq!(p.layout(), "{0,4},{1,5},{2,6},{3,7}");
}

/// An SMT desktop whose last-level cache is shared by 4 of its 8 cores (two core complexes
/// in one package): `ll_caches` differs from `sockets` there.
#[test]
fn smt_machine_with_two_last_level_caches_per_package() {
    let t = fixture("ryzen-2ccx-smt");
    assert_eq!(groups(&t, Level::Packages).len(), 1);
    assert_eq!(
        groups(&t, Level::LlCaches),
        ["0,1,2,3,8,9,10,11", "4,5,6,7,12,13,14,15"]
    );
    assert_eq!(groups(&t, Level::Cores)[1], "1,9");
    assert_eq!(Places::parse_on("ll_caches", &t).unwrap().len(), 2);
    assert_eq!(Places::parse_on("sockets", &t).unwrap().len(), 1);
    assert_eq!(Places::parse_on("packages", &t).unwrap().len(), 1);
}

/// The machine these tests were first run on, recorded from its /sys: a 2-core VM.
#[test]
fn recorded_two_core_vm() {
    let t = fixture("this-vm-2c");
    assert_eq!(groups(&t, Level::Cores), ["0", "1"]);
    assert_eq!(groups(&t, Level::LlCaches), ["0,1"]);
    assert_eq!(Places::parse_on("threads", &t).unwrap().layout(), "{0},{1}");
}

#[test]
fn a_missing_topology_file_is_an_error_naming_it() {
    let e = Topology::from_sysfs("/nonexistent/sys").unwrap_err();
    assert!(matches!(e, Error::Topology { .. }));
    assert!(
        e.to_string()
            .contains("/nonexistent/sys/devices/system/cpu/online"),
        "{e}"
    );
}

#[test]
fn explicit_descriptions() {
    let t = fixture("laptop-4c8t");
    let p = Places::parse_on("{0,1},{2-3},{4:2}", &t).unwrap();
    assert_eq!(p.layout(), "{0,1},{2,3},{4,5}");
    assert_eq!(p.place_of_workers(), [0, 0, 1, 1, 2, 2]);
    let p = Places::parse_on(" 3x2 ", &t).unwrap();
    assert_eq!(
        (p.len(), p.workers(), p.layout().as_str()),
        (3, 6, "{*,*},{*,*},{*,*}")
    );
    assert_eq!("2x1".parse::<Places>().unwrap().workers(), 2);
}

#[test]
fn bad_descriptions_say_what_is_wrong() {
    let t = fixture("laptop-4c8t");
    for (spec, says) in [
        ("", "empty"),
        ("{0,1},{}", "place 1 is empty"),
        ("{0,1},{1,2}", "core 1 is in two places (0 and 1)"),
        ("{0,0}", "core 0 is listed twice"),
        ("{0},{9}", "core 9 does not exist"),
        ("0x2", "at least one place"),
        ("2x0", "at least one place"),
        ("axb", "not a number of places"),
        ("numa", "not a shape"),
        ("{0,1", "not closed"),
        ("{0},", "trailing comma"),
        ("{3-1}", "backwards"),
        ("100x100", "more than the limit"),
        ("{0:100000000000}", "more than"),
        // A first core whose range runs past the largest core id: named, not "too many".
        (
            "{18446744073709551615:1}",
            "core 18446744073709551615 + 1 overflows: too large for a core id",
        ),
        ("{18446744073709551615:2}", "overflows"),
        ("{18446744073709551615:100000}", "more than 4096 cores"),
        ("{0-100000000000}", "more than 65536 CPUs"),
    ] {
        let e = Places::parse_on(spec, &t).unwrap_err();
        assert!(matches!(e, Error::BadPlaces { .. }), "{spec}: {e:?}");
        assert!(
            e.to_string().contains(says),
            "{spec}: `{e}` should say `{says}`"
        );
    }
}

#[test]
fn threads_that_disagree_with_the_places_are_refused() {
    let e = Runtime::builder()
        .threads(3)
        .places(Places::uniform(2, 1).unwrap())
        .build()
        .unwrap_err();
    assert!(e.to_string().contains("2 workers but threads(3)"), "{e}");
    let rt = Runtime::builder()
        .threads(2)
        .places(Places::uniform(2, 1).unwrap())
        .build()
        .unwrap();
    assert_eq!(rt.place_count(), 2);
    assert_eq!(rt.worker_places(), [PlaceId(0), PlaceId(1)]);
}
