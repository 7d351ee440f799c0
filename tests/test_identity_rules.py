"""Identity rules the mutation spot-checks found untested (CONTRIBUTING: Mutation spot-checks): a student's key is
drawn from their name in NFC, stripped, however it was typed; an SIS ID on the roster matches Gradescope's SID in
whichever Unicode form either was written."""

import unicodedata

from course import lms
from course import secret as course_secret
from tests.test_lms import COURSE_ROSTER, METADATA, NOTEBOOK, make_zip, nb_bytes, roster_of

NFC = "José Núñez"
NFD = unicodedata.normalize("NFD", NFC)


def test_a_students_key_is_the_same_for_every_form_of_their_name():
    secret = bytes(range(32))
    key = course_secret.student_key(secret, NFC)
    assert NFD != NFC and course_secret.student_key(secret, NFD) == key
    assert course_secret.student_key(secret, f"  {NFD} \n") == key
    assert course_secret.student_key(secret, "Jose Nunez") != key  # another name is another key


def test_an_sis_id_in_nfd_on_the_roster_matches_gradescopes_sid_in_nfc(tmp_path):
    sid = "SÉ1"
    roster = roster_of(tmp_path, COURSE_ROSTER.replace(",S1\n", f",{unicodedata.normalize('NFD', sid)}\n"))
    metadata = METADATA.replace(":sid: 'S1'", f":sid: '{sid}'").replace("jose@example.edu", "nobody@example.edu")
    archive = tmp_path / "gs.zip"
    make_zip(archive, {"assignment_export/submission_metadata.yml": metadata.encode(),
                       f"assignment_export/submission_9001/{NOTEBOOK}": nb_bytes("jose")})
    taken = lms.intake(archive, tmp_path / "out", roster, None, {NOTEBOOK})
    assert "Núñez, José" in taken.matched, taken.report
